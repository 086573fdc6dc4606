/**
 * Request-body limits over HTTP/2: a body over `max_body` (by its `content-length` or as it
 * streams) gets `413`, a gap longer than `body_read_timeout` `408`, and only that stream ends:
 * the connection's other streams, in flight or new, go on (over HTTP/1.1 the connection closes,
 * since the unread rest of the body would be taken for the next request; HTTP/2 frames each
 * stream's data apart).
 */
import assert from "node:assert/strict";
import { app, scalwsYaml, sleep, startMember, startPki, startScalwsd } from "./_support/mod.ts";
import { httpsListener } from "./_support/yaml.ts";
import {
  DATA,
  END_HEADERS,
  END_STREAM,
  frame,
  H2Raw,
  HEADERS,
  request,
  requestBlock,
} from "./_support/h2_raw.ts";

/** How long the member holds `/slow` (ms): longer than the half second a closing connection lingers. */
const SLOW_MS = 1200;

Deno.test("HTTP/2: 413 and 408 end their stream only; the connection's other streams go on", async () => {
  await using pki = await startPki();
  const cert = await pki.issue("a", ["a.test"]);
  await using member = startMember("m", async (req) => {
    if (new URL(req.url).pathname === "/slow") await sleep(SLOW_MS);
    // Stream 7 is cut when its body stalls: the member sees the upload fail.
    const len = req.body === null
      ? 0
      : (await req.arrayBuffer().catch(() => new ArrayBuffer(0))).byteLength;
    return new Response(`got ${len}`);
  });
  await using s = await startScalwsd(scalwsYaml({
    server: {
      listeners: [httpsListener(cert)],
      max_body: "1KiB",
      limits: { body_read_timeout: "300ms" },
    },
    apps: [app({ type: "proxy", upstream: `http://${member.address}` })],
  }));
  const port = s.server.bound.get("https")!.port;
  await using h2 = await H2Raw.connect({ port, ca: pki.ca, servername: "a.test" });
  const post = (id: number, extra: [string, string][] = []) =>
    h2.send(frame(HEADERS, END_HEADERS, id, requestBlock("a.test", "/up", extra, "POST")));

  await h2.send(request(1, "a.test", "/slow"));
  await post(3, [["content-length", "5000"]]);
  await post(5);
  await h2.send(frame(DATA, 0, 5, new Uint8Array(800)));
  await h2.send(frame(DATA, 0, 5, new Uint8Array(800)));
  await post(7);
  await h2.send(frame(DATA, 0, 7, new Uint8Array(10)));
  assert.ok(
    await h2.until(() => [3, 5, 7].every((id) => h2.stream(id).ended), 3000),
    `answers: ${JSON.stringify([3, 5, 7].map((id) => h2.stream(id)))}`,
  );
  assert.deepEqual([3, 5, 7].map((id) => h2.stream(id).body), [
    "Content Too Large\n",
    "Content Too Large\n",
    "Request Timeout\n",
  ]);

  assert.ok(await h2.until(() => h2.stream(1).ended || h2.closed, SLOW_MS + 3000));
  assert.equal(h2.closed, false, "the connection was closed");
  assert.deepEqual(h2.goaways, []);
  assert.deepEqual([h2.stream(1).status, h2.stream(1).body], [200, "got 0"]);

  await h2.send(frame(HEADERS, END_HEADERS | END_STREAM, 9, requestBlock("a.test", "/after")));
  assert.ok(await h2.until(() => h2.stream(9).ended || h2.closed, 3000));
  assert.deepEqual([h2.stream(9).status, h2.stream(9).body], [200, "got 0"]);
});
