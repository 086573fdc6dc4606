/**
 * Seeded fuzzing of the response side: generated HTTP/1.1 responses, valid and mutated, go
 * through the parser, the chunked decoder and `send` over in-memory sockets split at random.
 * Invariants: valid responses come back intact; anything else fails with `UpstreamError`
 * (malformed, or closed before a complete head); nothing hangs; in the suite each test stays
 * under 5 s.
 * `SCALWS_FUZZ_CASES` sets the cases of each test (the suite runs a slice; `deno task fuzz`
 * 100,000, with no time budget).
 */

import assert from "node:assert/strict";
import { FakeFactory, FakeSocket } from "./_fake_socket.ts";
import { ChunkedDecoder, findHeadEnd } from "../wire/mod.ts";
import { RESPONSE_CHUNKED } from "./read_chunked_response.ts";
import { ConnPool } from "./conn_pool.ts";
import { parseResponseHead } from "./parse_response_head.ts";
import { send } from "./send.ts";
import type { OutboundRequest, SendOptions } from "./types.ts";
import { UpstreamError } from "./upstream_error.ts";
import { Gen } from "../base/_gen.ts";
import { concat } from "../../tests/_support/bytes.ts";

/** `deno task fuzz`'s count, when it runs these tests. */
const FUZZ_CASES = Deno.env.get("SCALWS_FUZZ_CASES");
/** Responses through `send`; the suite's slice (1200) takes about 1 s on an idle 2-core box. */
const CASES = Number(FUZZ_CASES ?? "1200");
/** Inputs to the head parser and the chunked decoder: the slice stops at its time budget. */
const RANDOM_CASES = FUZZ_CASES === undefined ? 50_000 : Number(FUZZ_CASES);
/** The slice's time budget for each random-bytes test; none under `deno task fuzz`. */
function budget(ms: number): number {
  return FUZZ_CASES === undefined ? performance.now() + ms : Infinity;
}
const enc = new TextEncoder();

/** The shared generator, plus the shapes of a response: field values, bodies. */
class ResponseGen extends Gen {
  value(): string {
    let s = "";
    for (let i = this.int(30); i > 0; i--) {
      const c = this.chance(0.05) ? 0x80 + this.int(128) : 0x20 + this.int(95);
      s += String.fromCharCode(c);
    }
    return s.trim();
  }
  body(): Uint8Array {
    const size = this.chance(0.1) ? this.int(200_000) : this.int(3000);
    const b = new Uint8Array(size);
    for (let i = 0; i < size; i++) b[i] = this.int(256);
    return b;
  }
}

interface Case {
  bytes: Uint8Array;
  method: string;
  expected: Uint8Array | null; // null: no body
}

function latin1Bytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** A valid response with its expected decoded body. */
function generate(g: ResponseGen): Case {
  const method = g.chance(0.1) ? "HEAD" : "GET";
  const status = g.pick([200, 200, 200, 201, 204, 206, 301, 304, 404, 500, 503, 299, 599]);
  const nl = g.chance(0.9) ? "\r\n" : "\n";
  let head = "";
  for (let i = g.int(3); i > 0; i--) {
    head += `HTTP/1.1 ${g.pick([100, 102, 103])} Interim${nl}`;
    if (g.chance(0.5)) head += `Link: </x>; rel=preload${nl}`;
    head += nl;
  }
  const minor = g.chance(0.9) ? 1 : 0;
  head += `HTTP/1.${minor} ${status}${g.chance(0.8) ? " " + g.value() : ""}${nl}`;
  for (let i = g.int(12); i > 0; i--) {
    let name = g.token();
    if (/^(content-length|transfer-encoding|connection|upgrade)$/i.test(name)) name = "x-" + name;
    head += `${name}:${g.chance(0.5) ? " " : ""}${g.value()}${nl}`;
  }
  const body = g.body();
  const noBody = method === "HEAD" || status === 204 || status === 304;
  const framing = g.int(3); // 0 length, 1 chunked, 2 close
  const parts: Uint8Array[] = [];
  if (framing === 0) {
    head += `${g.pick(["Content-Length", "content-length"])}: ${body.length}${nl}`;
  } else if (framing === 1) {
    head += `Transfer-Encoding: chunked${nl}`;
  } else if (minor === 1 && !noBody) {
    head += `Connection: close${nl}`;
  }
  head += nl;
  parts.push(latin1Bytes(head));
  if (!noBody) {
    if (framing === 0 || framing === 2) {
      parts.push(body);
    } else {
      let at = 0;
      while (at < body.length) {
        const n = Math.min(body.length - at, 1 + g.int(g.chance(0.2) ? 70_000 : 500));
        const ext = g.chance(0.2) ? ";a=b" : "";
        parts.push(latin1Bytes(n.toString(16) + ext + "\r\n"), body.subarray(at, at + n));
        parts.push(latin1Bytes("\r\n"));
        at += n;
      }
      parts.push(latin1Bytes(g.chance(0.3) ? "0\r\nX-Trailer: 1\r\n\r\n" : "0\r\n\r\n"));
    }
  }
  return { bytes: concat(parts), method, expected: noBody ? null : body };
}

const INTERESTING = [0x0d, 0x0a, 0x3a, 0x20, 0x09, 0x00, 0x7f, 0xff, 0x30, 0x39, 0x61, 0x66, 0x3b];

function mutate(g: ResponseGen, input: Uint8Array): Uint8Array {
  // Most bugs hide in the head and framing: aim most mutations at the first bytes.
  let b = input;
  for (let m = 1 + g.int(4); m > 0; m--) {
    const span = Math.max(1, g.chance(0.8) ? Math.min(b.length, 400) : b.length);
    const at = g.int(span);
    switch (g.int(6)) {
      case 0: {
        b = b.slice();
        b[at] = g.int(256);
        break;
      }
      case 1: {
        b = b.slice();
        b[at] = g.pick(INTERESTING);
        break;
      }
      case 2:
        b = concat([b.subarray(0, at), Uint8Array.of(g.pick(INTERESTING)), b.subarray(at)]);
        break;
      case 3:
        b = concat([b.subarray(0, at), b.subarray(at + 1)]);
        break;
      case 4:
        b = b.subarray(0, at);
        break;
      default: {
        const len = g.int(40);
        b = concat([b.subarray(0, at), b.subarray(at, at + len), b.subarray(at)]);
      }
    }
  }
  return b;
}

function request(method: string): OutboundRequest {
  return {
    method,
    target: "/",
    head: {
      headers: new Headers(),
      host: "m",
      clientHost: "",
      peer: "",
      peerTrusted: false,
      proto: "http",
      upgrade: false,
    },
    body: null,
    bodyLength: -1,
  };
}

const opts: SendOptions = { connectTimeout: 0, responseTimeout: 0 };

async function readAll(body: Uint8Array | ReadableStream<Uint8Array> | null): Promise<Uint8Array> {
  if (body === null) return new Uint8Array(0);
  if (body instanceof Uint8Array) return body.slice();
  const parts: Uint8Array[] = [];
  const reader = body.getReader();
  for (let i = 0; i < 1_000_000; i++) {
    const r = await reader.read();
    if (r.done) return concat(parts);
    parts.push(r.value);
  }
  throw new Error("body did not end");
}

/** Runs one response through `send`; returns the body or the error. */
async function attempt(c: Case, pieces: number[]): Promise<Uint8Array | UpstreamError> {
  const sock = new FakeSocket(c.bytes, pieces);
  const pool = new ConnPool(new FakeFactory([sock]));
  try {
    const res = await send(pool, request(c.method), opts);
    return await readAll(res.body);
  } catch (err) {
    if (err instanceof UpstreamError) return err;
    throw err;
  } finally {
    pool.close();
  }
}

/** In-memory input always ends, so a case that takes a second has hung. */
async function run(c: Case, pieces: number[]): Promise<Uint8Array | UpstreamError> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("case hung")), 1000);
  });
  try {
    return await Promise.race([attempt(c, pieces), hang]);
  } finally {
    clearTimeout(timer);
  }
}

function acceptable(e: UpstreamError): boolean {
  return e.kind === "malformed" || (e.kind === "closed" && e.phase === "head");
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

Deno.test("fuzz: valid and mutated responses through send over split reads", async () => {
  const g = new ResponseGen(0x5ca1);
  let valid = 0;
  let mutated = 0;
  let rejected = 0;
  // A fixed count, not a time budget: the same cases run on a busy machine as on an idle one.
  for (let i = 0; i < CASES; i++) {
    const c = generate(g);
    const pieces = [1 + g.int(g.chance(0.3) ? 8 : 4000), 1 + g.int(20_000)];
    if (i % 3 === 0) {
      const out = await run(c, pieces);
      if (out instanceof UpstreamError) {
        assert.fail(`valid case ${i} failed: ${out.message}`);
      }
      assert.ok(equalBytes(out, c.expected ?? new Uint8Array(0)), `case ${i}: body differs`);
      valid++;
    } else {
      const m: Case = { ...c, bytes: mutate(g, c.bytes) };
      const out = await run(m, pieces);
      if (out instanceof UpstreamError) {
        assert.ok(acceptable(out), `case ${i}: ${out.kind}/${out.phase}: ${out.message}`);
        rejected++;
      }
      mutated++;
    }
  }
  assert.ok(valid >= CASES / 4, `only ${valid} valid cases ran`);
  assert.ok(mutated >= CASES / 2, `only ${mutated} mutated cases ran`);
  assert.ok(rejected > mutated / 10, `mutations rarely rejected: ${rejected}/${mutated}`);
});

Deno.test("fuzz: random bytes into parseResponseHead throw only malformed", () => {
  const g = new ResponseGen(42);
  const until = budget(1000);
  let parsed = 0;
  for (let i = 0; i < RANDOM_CASES && performance.now() < until; i++) {
    const base = generate(g).bytes.subarray(0, 600);
    const input = i % 2 === 0 ? mutate(g, base) : base.map(() => g.pick(INTERESTING));
    const end = findHeadEnd(input, 0, input.length);
    if (end < 0) continue;
    try {
      parseResponseHead(input, 0, end);
      parsed++;
    } catch (err) {
      assert.ok(err instanceof UpstreamError && err.kind === "malformed", String(err));
    }
  }
  assert.ok(parsed > 100);
});

Deno.test("fuzz: random bytes into ChunkedDecoder make progress and throw only malformed", () => {
  const g = new ResponseGen(7);
  const until = budget(700);
  const alphabet = enc.encode("0123456789abcdefABCDEF;= \t\r\n\r\nxyz");
  for (let i = 0; i < RANDOM_CASES && performance.now() < until; i++) {
    const input = new Uint8Array(1 + g.int(200)).map(() => alphabet[g.int(alphabet.length)]);
    const d = new ChunkedDecoder(RESPONSE_CHUNKED);
    let pos = 0;
    try {
      for (let step = 0; pos < input.length && !d.done; step++) {
        const next = d.decode(input, pos, Math.min(input.length, pos + 1 + g.int(16)));
        assert.ok(next > pos || d.done, "decoder made no progress");
        assert.ok(step < 10_000);
        pos = next;
      }
    } catch (err) {
      assert.ok(err instanceof UpstreamError && err.kind === "malformed", String(err));
    }
  }
});
