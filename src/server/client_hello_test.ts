import assert from "node:assert/strict";
import { seeded } from "../base/random.ts";
import {
  FALLBACK_SCSV,
  FOUND,
  HelloResult,
  MAX_CLIENT_HELLO,
  NEED_MORE,
  NOT_HELLO,
  OFFERS_SIGS,
  OFFERS_TLS13,
  readClientHello,
  SIG_ED25519,
  SIG_P256,
  SIG_P384,
  SIG_P521,
  SIG_RSA_PKCS1,
  SIG_RSA_PSS,
  SUITE_ECDSA12,
  SUITE_RSA12,
} from "./client_hello.ts";

function u16(n: number): number[] {
  return [n >> 8, n & 255];
}

/** A ClientHello handshake message (not yet in records) with the given extensions. */
function helloMessage(exts: number[][], padding = 0, suites = [0x1301]): number[] {
  const body = [3, 3, ...new Array(32).fill(7), 0, ...u16(suites.length * 2)];
  for (const s of suites) body.push(...u16(s));
  body.push(1, 0);
  const ext: number[] = [];
  for (const e of exts) ext.push(...e);
  if (padding > 0) ext.push(...u16(21), ...u16(padding), ...new Array(padding).fill(0));
  body.push(...u16(ext.length), ...ext);
  return [1, body.length >> 16, (body.length >> 8) & 255, body.length & 255, ...body];
}

function sniExt(name: string): number[] {
  const n = [...new TextEncoder().encode(name)];
  const entry = [0, ...u16(n.length), ...n];
  return [...u16(0), ...u16(entry.length + 2), ...u16(entry.length), ...entry];
}

/** Cuts a handshake message into records of at most `size` payload bytes. */
function records(msg: number[], size: number): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < msg.length; i += size) {
    const part = msg.slice(i, i + size);
    out.push(22, 3, 1, ...u16(part.length), ...part);
  }
  return new Uint8Array(out);
}

function read(bytes: Uint8Array, len = bytes.length): HelloResult {
  return readClientHello(bytes, len, new HelloResult());
}

Deno.test("readClientHello finds the SNI name in one record, lower-cased", () => {
  const r = read(records(helloMessage([[...u16(10), ...u16(2), 0, 29], sniExt("A.Test")]), 16384));
  assert.equal(r.state, FOUND);
  assert.equal(r.name, "a.test");
});

Deno.test("readClientHello answers no name when the ClientHello has no SNI", () => {
  const r = read(records(helloMessage([[...u16(10), ...u16(2), 0, 29]]), 16384));
  assert.equal(r.state, FOUND);
  assert.equal(r.name, "");
});

Deno.test("readClientHello reads a ClientHello split across records, even its header", () => {
  const msg = helloMessage([sniExt("split.example")], 3000);
  for (const size of [1, 2, 3, 4, 5, 100, 1000]) {
    const r = read(records(msg, size));
    assert.equal(r.state, FOUND, `records of ${size}`);
    assert.equal(r.name, "split.example", `records of ${size}`);
  }
});

Deno.test("readClientHello asks for more until every byte of the ClientHello is there", () => {
  const bytes = records(helloMessage([sniExt("b.test")], 500), 200);
  for (let len = 0; len < bytes.length; len++) {
    assert.equal(read(bytes, len).state, NEED_MORE, `at ${len} bytes`);
  }
  assert.equal(read(bytes).name, "b.test");
});

Deno.test("readClientHello refuses what is no ClientHello", () => {
  const http = new TextEncoder().encode("GET / HTTP/1.1\r\nhost: a\r\n\r\n");
  assert.equal(read(http).state, NOT_HELLO);
  const bad = records(helloMessage([sniExt("a.test")]), 16384);
  bad[5] = 2; // a ServerHello
  assert.equal(read(bad).state, NOT_HELLO);
  const big = new Uint8Array([22, 3, 1, 0, 4, 1, 1, 0, 0]); // announces 64 KiB
  assert.ok(0x10000 > MAX_CLIENT_HELLO);
  assert.equal(read(big).state, NOT_HELLO);
  const badName = records(helloMessage([sniExt("a b")]), 16384);
  assert.equal(read(badName).state, NOT_HELLO);
});

/** An extension of `type` whose body is a list (with a `lenBytes` length) of 16-bit values. */
function listExt(type: number, values: number[], lenBytes = 2): number[] {
  const list = values.flatMap(u16);
  const head = lenBytes === 2 ? u16(list.length) : [list.length];
  return [...u16(type), ...u16(head.length + list.length), ...head, ...list];
}

Deno.test("readClientHello reads what the client offers for choosing a certificate", () => {
  const offers = (exts: number[][], suites?: number[]) =>
    read(records(helloMessage(exts, 0, suites), 16384)).offers;
  const sigs = listExt(13, [0x0403, 0x0503, 0x0603, 0x0807, 0x0804, 0x0401, 0x0201]);
  const v13 = listExt(43, [0x0304, 0x0303], 1);
  assert.equal(
    offers([sniExt("a.test"), sigs, v13]),
    OFFERS_SIGS | SIG_P256 | SIG_P384 | SIG_P521 | SIG_ED25519 | SIG_RSA_PSS | SIG_RSA_PKCS1 |
      OFFERS_TLS13,
  );
  assert.equal(offers([listExt(13, [0x0403])]), OFFERS_SIGS | SIG_P256);
  assert.equal(offers([listExt(13, [0x0806, 0x0601])]), OFFERS_SIGS | SIG_RSA_PSS | SIG_RSA_PKCS1);
  assert.equal(offers([listExt(43, [0x0303], 1)]), 0, "TLS 1.2 only");
  assert.equal(offers([], [0xc02b, 0x1301]), SUITE_ECDSA12);
  assert.equal(offers([], [0xcca8, 0x009c]), SUITE_RSA12);
  assert.equal(offers([], [0xc02b, 0x5600]), SUITE_ECDSA12 | FALLBACK_SCSV);
  const r = read(records(helloMessage([listExt(13, [0x0403]), sniExt("B.test")]), 16384));
  assert.deepEqual([r.state, r.name, r.offers], [FOUND, "b.test", OFFERS_SIGS | SIG_P256]);
});

Deno.test("readClientHello reads the name of a real client's ClientHello", async () => {
  const server = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const client = Deno.connectTls({ hostname: "localhost", port: server.addr.port })
    .catch(() => {});
  const conn = await server.accept();
  const buf = new Uint8Array(MAX_CLIENT_HELLO + 5);
  let len = 0;
  const out = new HelloResult();
  while (readClientHello(buf, len, out).state === NEED_MORE) {
    const n = await conn.read(buf.subarray(len));
    if (n === null) break;
    len += n;
  }
  conn.close();
  server.close();
  await client;
  assert.equal(out.state, FOUND);
  assert.equal(out.name, "localhost");
  const want = OFFERS_SIGS | OFFERS_TLS13 | SIG_P256 | SIG_RSA_PSS | SUITE_ECDSA12 | SUITE_RSA12;
  assert.equal(out.offers & want, want, "rustls offers ECDSA and RSA, TLS 1.3 and 1.2");
});

Deno.test("readClientHello: mutated and cut ClientHellos never throw, in any split", () => {
  const random = seeded(18);
  const cases = Number(Deno.env.get("SCALWS_FUZZ_CASES") ?? 3000);
  const base = helloMessage([[...u16(10), ...u16(2), 0, 29], sniExt("fuzz.example")], 40);
  for (let i = 0; i < cases; i++) {
    const bytes = records(base, 1 + Math.floor(random() * 300));
    const flips = Math.floor(random() * 4);
    for (let f = 0; f < flips; f++) {
      bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
    }
    const whole = read(bytes);
    // Fed in growing prefixes, the answer only settles once and then agrees with the whole.
    const cut = Math.floor(random() * bytes.length);
    const early = read(bytes, cut);
    if (early.state !== NEED_MORE) {
      assert.equal(early.state, whole.state, `case ${i}`);
      assert.equal(early.name, whole.name, `case ${i}`);
    }
    if (whole.state === FOUND) assert.match(whole.name, /^[a-z0-9._-]*$/);
  }
});
