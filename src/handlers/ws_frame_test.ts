import assert from "node:assert/strict";
import {
  closePayload,
  encodeFrame,
  FrameError,
  FrameReader,
  MessageAssembler,
  OP_BINARY,
  OP_CLOSE,
  OP_CONTINUATION,
  OP_PING,
  OP_TEXT,
  parseClose,
} from "./ws_frame.ts";

const MASK = new Uint8Array([1, 2, 3, 4]);

/** An unmasked server frame, as a member sends it. */
function serverFrame(first: number, payload: Uint8Array): Uint8Array {
  const n = payload.length;
  const head = n < 126 ? [first, n] : n < 65536 ? [first, 126, n >> 8, n & 255] : [
    first,
    127,
    0,
    0,
    0,
    0,
    (n >>> 24) & 255,
    (n >>> 16) & 255,
    (n >>> 8) & 255,
    n & 255,
  ];
  const out = new Uint8Array(head.length + n);
  out.set(head);
  out.set(payload, head.length);
  return out;
}

Deno.test("encodeFrame masks the payload and picks the length encoding", () => {
  const f = encodeFrame(OP_TEXT, new TextEncoder().encode("Hi"), MASK);
  assert.deepEqual([...f], [0x81, 0x82, 1, 2, 3, 4, 0x48 ^ 1, 0x69 ^ 2]);
  const mid = encodeFrame(OP_BINARY, new Uint8Array(300), MASK);
  assert.deepEqual([...mid.subarray(0, 4)], [0x82, 0x80 | 126, 1, 44]);
  assert.equal(mid.length, 4 + 4 + 300);
  const big = encodeFrame(OP_BINARY, new Uint8Array(70_000), MASK);
  assert.deepEqual([...big.subarray(0, 10)], [0x82, 0x80 | 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70]);
  assert.equal(big.length, 10 + 4 + 70_000);
});

Deno.test("FrameReader splits frames across reads of any size", () => {
  const text = serverFrame(0x81, new TextEncoder().encode("hello"));
  const bin = serverFrame(0x82, new Uint8Array(70_000).fill(7));
  const ping = serverFrame(0x89, new Uint8Array([9]));
  const all = new Uint8Array([...text, ...bin, ...ping]);
  for (const step of [1, 7, 1000, all.length]) {
    const r = new FrameReader(1 << 20);
    const got: [number, boolean, number][] = [];
    for (let i = 0; i < all.length; i += step) {
      r.push(all.subarray(i, i + step));
      for (let f = r.next(); f !== null; f = r.next()) {
        got.push([f.opcode, f.fin, f.payload.length]);
      }
    }
    assert.deepEqual(
      got,
      [[OP_TEXT, true, 5], [OP_BINARY, true, 70_000], [OP_PING, true, 1]],
      `step ${step}`,
    );
  }
});

Deno.test("FrameReader refuses what a server must not send", () => {
  const cases: [Uint8Array, number][] = [
    [new Uint8Array([0x81, 0x81, 1, 2, 3, 4, 0]), 1002], // masked
    [new Uint8Array([0xc1, 0]), 1002], // RSV1 without an extension
    [new Uint8Array([0x83, 0]), 1002], // reserved opcode
    [new Uint8Array([0x09, 0]), 1002], // fragmented ping
    [serverFrame(0x89, new Uint8Array(126)), 1002], // control frame over 125 bytes
    [serverFrame(0x82, new Uint8Array(2000)), 1009], // over the limit
  ];
  for (const [bytes, code] of cases) {
    const r = new FrameReader(1000);
    r.push(bytes);
    assert.throws(() => r.next(), (e: unknown) => e instanceof FrameError && e.code === code);
  }
});

Deno.test("close payloads carry a code and a UTF-8 reason", () => {
  assert.deepEqual(parseClose(closePayload(4001, "done é")), { code: 4001, reason: "done é" });
  assert.deepEqual(parseClose(closePayload(undefined)), { code: undefined, reason: "" });
  assert.equal(closePayload(1000, "x".repeat(200)).length, 125, "control frames hold 125 bytes");
  for (const code of [999, 1004, 1005, 1006, 1016, 2999, 5000]) {
    assert.throws(() => parseClose(closePayload(code)), FrameError, String(code));
  }
  assert.throws(() => parseClose(new Uint8Array([3])), FrameError);
  assert.throws(() => parseClose(new Uint8Array([3, 232, 0xff])), FrameError);
  assert.equal(OP_CLOSE, 8);
});

Deno.test("MessageAssembler joins fragments, passes whole messages through, refuses bad order and size", () => {
  const enc = new TextEncoder();
  const m = new MessageAssembler(8);
  const whole = enc.encode("hi");
  assert.equal(m.add({ fin: true, opcode: OP_TEXT, payload: whole }), whole);
  assert.equal(m.opcode, OP_TEXT);
  // The parts are copied: the reader may reuse the buffer of a frame once it is handed over.
  const part = enc.encode("abc");
  assert.equal(m.add({ fin: false, opcode: OP_BINARY, payload: part }), null);
  part.fill(0);
  assert.equal(m.add({ fin: false, opcode: OP_CONTINUATION, payload: enc.encode("de") }), null);
  const joined = m.add({ fin: true, opcode: OP_CONTINUATION, payload: enc.encode("f") });
  assert.deepEqual([m.opcode, new TextDecoder().decode(joined!)], [OP_BINARY, "abcdef"]);
  assert.throws(
    () => m.add({ fin: true, opcode: OP_CONTINUATION, payload: part }),
    (e: unknown) => e instanceof FrameError && e.code === 1002,
  );
  m.add({ fin: false, opcode: OP_TEXT, payload: part });
  assert.throws(
    () => m.add({ fin: true, opcode: OP_TEXT, payload: part }),
    (e: unknown) => e instanceof FrameError && e.code === 1002,
  );
  assert.throws(
    () => m.add({ fin: false, opcode: OP_CONTINUATION, payload: new Uint8Array(6) }),
    (e: unknown) => e instanceof FrameError && e.code === 1009,
  );
});
