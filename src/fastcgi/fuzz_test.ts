/**
 * Seeded fuzzing of the FastCGI response side: generated answers (records of any size and
 * padding, STDERR between them, heads of any shape), valid and mutated, go through `fcgiSend`
 * over in-memory sockets split at random, and random bytes go through the CGI head parser.
 * Valid answers come back intact; anything else fails with `UpstreamError` only; nothing
 * hangs. `SCALWS_FUZZ_CASES` sets the number of cases (the suite runs a slice; `deno task
 * fuzz` runs 100,000).
 */

import assert from "node:assert/strict";
import { bytes as latin1Bytes, FakeFactory, FakeSocket } from "../http1/_fake_socket.ts";
import { ConnPool } from "../http1/conn_pool.ts";
import { UpstreamError } from "../http1/upstream_error.ts";
import { Gen } from "../base/_gen.ts";
import { concat, end, record, stderr } from "./_fake_server.ts";
import { ParamsBuffer } from "./params.ts";
import { END_REQUEST, STDOUT } from "./record.ts";
import { findCgiHeadEnd, parseCgiHead } from "./parse_cgi_head.ts";
import { fcgiSend } from "./fcgi_send.ts";

const CASES = Number(Deno.env.get("SCALWS_FUZZ_CASES") ?? "400");
const BUDGET_MS = CASES > 1000 ? 600_000 : 3000;

/** The shared generator, plus header values as an application writes them. */
class CgiGen extends Gen {
  value(): string {
    let s = "";
    for (let i = this.int(30); i > 0; i--) s += String.fromCharCode(0x21 + this.int(94));
    return s;
  }
}

interface Case {
  readonly input: Uint8Array;
  readonly status: number;
  readonly headers: [string, string][];
  readonly body: Uint8Array;
}

/** A valid answer: its STDOUT cut into records at random, STDERR sprinkled in. */
function validCase(g: CgiGen): Case {
  const headers: [string, string][] = [];
  let head = "";
  let status = 200;
  if (g.chance(0.3)) {
    status = 200 + g.int(400);
    if (status === 204 || status === 304) status = 200;
    head += `Status: ${status} Whatever\r\n`;
  }
  const nl = g.chance(0.5) ? "\r\n" : "\n";
  for (let i = 1 + g.int(6); i > 0; i--) {
    const name = "x-" + g.token().toLowerCase();
    const value = g.value();
    headers.push([name, value]);
    head += `${name}: ${value}${nl}`;
  }
  head += nl;
  const bodyLen = g.chance(0.1) ? g.int(150_000) : g.int(3000);
  const body = new Uint8Array(bodyLen).map(() => g.int(256));
  const stream = concat([latin1Bytes(head), body]);
  const parts: Uint8Array[] = [];
  let at = 0;
  while (at < stream.length) {
    const n = Math.min(stream.length - at, 1 + g.int(g.chance(0.5) ? 40 : 65535));
    parts.push(record(STDOUT, stream.subarray(at, at + n), { padding: g.int(8) }));
    if (g.chance(0.1)) parts.push(stderr("warning " + g.value()));
    at += n;
  }
  parts.push(record(STDOUT, ""), end(g.int(3)));
  return { input: concat(parts), status, headers, body };
}

function mutate(g: CgiGen, input: Uint8Array): Uint8Array {
  const out = input.slice();
  const kind = g.int(4);
  if (kind === 0) {
    for (let i = 1 + g.int(4); i > 0; i--) out[g.int(out.length)] = g.int(256);
    return out;
  }
  if (kind === 1) return out.subarray(0, g.int(out.length));
  if (kind === 2) {
    // A record header replaced by garbage type or id.
    const c = out.slice();
    c[g.chance(0.5) ? 1 : 3] = g.int(256);
    return c;
  }
  return concat([out.subarray(0, g.int(out.length)), record(g.int(12), g.value())]);
}

function params(): ParamsBuffer {
  const p = new ParamsBuffer();
  p.add("REQUEST_METHOD", "GET");
  return p;
}

async function run(input: Uint8Array, pieces: number[]) {
  const sock = new FakeSocket(input, pieces);
  const pool = new ConnPool(new FakeFactory([sock]));
  const res = await fcgiSend(pool, { method: "GET", params: params(), body: null, bodyLength: 0 }, {
    connectTimeout: 1000,
    responseTimeout: 5000,
  });
  const body = res.body === null
    ? new Uint8Array(0)
    : res.body instanceof Uint8Array
    ? res.body.slice()
    : await new Response(res.body).bytes();
  pool.close();
  return { res, body };
}

Deno.test("fuzz: valid and mutated FastCGI answers through fcgiSend over split reads", async () => {
  const g = new CgiGen(15);
  const started = Date.now();
  let valid = 0;
  let refused = 0;
  for (let i = 0; i < CASES && Date.now() - started < BUDGET_MS; i++) {
    const c = validCase(g);
    const pieces = [1 + g.int(g.chance(0.3) ? 16 : 20000)];
    if (g.chance(0.5)) {
      const { res, body } = await run(c.input, pieces);
      assert.equal(res.status, c.status);
      assert.deepEqual(res.headers, c.headers);
      assert.deepEqual(body, c.body);
      valid++;
      continue;
    }
    try {
      await run(mutate(g, c.input), pieces);
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      refused++;
    }
  }
  assert.ok(valid > 0 && refused > 0, `valid ${valid}, refused ${refused}`);
});

Deno.test("fuzz: random bytes into the CGI head parser throw only malformed", () => {
  const g = new CgiGen(16);
  const alphabet = latin1Bytes("Status: 20 0\r\nLocation:/x\tContent-Length: 12\n\n\x00\x7fé");
  for (let i = 0; i < CASES * 10; i++) {
    const b = new Uint8Array(g.int(80)).map(() =>
      g.chance(0.8) ? alphabet[g.int(alphabet.length)] : g.int(256)
    );
    const found = findCgiHeadEnd(b, 0, b.length);
    if (found < 0) continue;
    try {
      const h = parseCgiHead(b, 0, found);
      assert.ok(h.status >= 200 && h.status <= 599);
    } catch (err) {
      assert.ok(err instanceof UpstreamError && err.kind === "malformed", String(err));
    }
  }
});

Deno.test("fuzz: an END_REQUEST alone is refused, never a success", async () => {
  await assert.rejects(run(record(END_REQUEST, new Uint8Array(8)), [8]), UpstreamError);
});
