import assert from "node:assert/strict";
import { bytes } from "../http1/_fake_socket.ts";
import { UpstreamError } from "../http1/upstream_error.ts";
import { findCgiHeadEnd, parseCgiHead } from "./parse_cgi_head.ts";

Deno.test("findCgiHeadEnd: LF or CRLF lines, an empty line at the block start, resumable", () => {
  const b = bytes("xxA: 1\r\nB: 2\r\n\r\nbody");
  assert.equal(findCgiHeadEnd(b, 2, b.length, 2), 16);
  assert.equal(findCgiHeadEnd(bytes("A: 1\n\nbody"), 0, 10), 6);
  // An empty first line ends an (empty) head at once.
  assert.equal(findCgiHeadEnd(bytes("zz\r\nA: 1\n\n"), 2, 10, 2), 4);
  const part = bytes("A: 1\r\nB");
  const resume = findCgiHeadEnd(part, 0, part.length);
  assert.ok(resume < 0);
  const whole = bytes("A: 1\r\nB: 2\r\n\r\n");
  assert.equal(findCgiHeadEnd(whole, ~resume, whole.length), 14);
});

Deno.test("parseCgiHead: Status, Location, repeated headers, hop-by-hop dropped", () => {
  const b = bytes("Status: 404 Not Found\nSet-Cookie: a=1\nSet-Cookie: b=2\nConnection: x\n\n");
  assert.deepEqual(parseCgiHead(b, 0, b.length), {
    status: 404,
    statusText: "Not Found",
    headers: [["set-cookie", "a=1"], ["set-cookie", "b=2"]],
    contentLength: -1,
  });
  const loc = bytes("Location: /x\r\nContent-Length: 0\r\n\r\n");
  assert.equal(parseCgiHead(loc, 0, loc.length).status, 302);
  const cl = bytes("Content-Length: 12\n\n");
  assert.equal(parseCgiHead(cl, 0, cl.length).contentLength, 12);
  for (
    const bad of [
      "Content-Length: 1, 2\n\n",
      "Status: 20\n\n",
      "Bad Name: 1\n\n",
      ": x\n\n",
      "A: \x01\n\n",
    ]
  ) {
    const x = bytes(bad);
    assert.throws(() => parseCgiHead(x, 0, x.length), UpstreamError, bad);
  }
});
