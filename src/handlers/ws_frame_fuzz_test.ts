/**
 * Seeded fuzzing of the WebSocket frame reader, on both sides (a member's unmasked frames, a
 * client's masked ones): generated frame sequences, valid and mutated, pushed in random splits.
 * Invariants: a valid sequence comes back frame for frame; any input gives frames, a wait for
 * more bytes or a `FrameError` (never another error), the same however it is split; the message
 * assembler, close payloads and text messages refuse with `FrameError` only.
 * `SCALWS_FUZZ_CASES` sets the cases (the suite runs a slice; `deno task fuzz` 100,000).
 */

import assert from "node:assert/strict";
import { Gen } from "../base/_gen.ts";
import {
  decodeText,
  encodeFrame,
  type Frame,
  FrameError,
  FrameReader,
  MessageAssembler,
  OP_BINARY,
  OP_CLOSE,
  OP_CONTINUATION,
  OP_PING,
  OP_PONG,
  OP_TEXT,
  parseClose,
} from "./ws_frame.ts";

const CASES = Number(Deno.env.get("SCALWS_FUZZ_CASES") ?? "2000");
/** The reader's payload limit: generated payloads stay under it, some mutations go over. */
const MAX_PAYLOAD = 70_000;

/** One generated frame as sent. */
interface Sent {
  fin: boolean;
  opcode: number;
  payload: Uint8Array;
}

function payload(g: Gen, control: boolean): Uint8Array {
  const size = control ? g.int(126) : g.chance(0.02) ? 126 + g.int(66_000) : g.int(200);
  const out = new Uint8Array(size);
  const text = g.chance(0.5);
  for (let i = 0; i < size; i++) out[i] = text ? 0x20 + g.int(95) : g.int(256);
  return out;
}

/** A valid sequence of frames: data messages, some fragmented, with control frames between. */
function frames(g: Gen): Sent[] {
  const out: Sent[] = [];
  for (let m = 1 + g.int(4); m > 0; m--) {
    if (g.chance(0.3)) {
      const op = g.pick([OP_PING, OP_PONG, OP_CLOSE]);
      out.push({ fin: true, opcode: op, payload: payload(g, true) });
      continue;
    }
    const parts = g.chance(0.7) ? 1 : 2 + g.int(3);
    for (let p = 0; p < parts; p++) {
      const opcode = p === 0 ? g.pick([OP_TEXT, OP_BINARY]) : OP_CONTINUATION;
      out.push({ fin: p === parts - 1, opcode, payload: payload(g, false) });
    }
  }
  return out;
}

/** The frames' bytes: masked as a client sends them, or unmasked as a member does. */
function encode(g: Gen, sent: Sent[], masked: boolean): Uint8Array {
  const parts = sent.map((f) => {
    const mask = masked ? Uint8Array.from([g.int(256), g.int(256), g.int(256), g.int(256)]) : null;
    const bytes = encodeFrame(f.opcode, f.payload, mask);
    if (!f.fin) bytes[0] &= 0x7f;
    return bytes;
  });
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const INTERESTING = [0x00, 0x7e, 0x7f, 0x80, 0x81, 0x88, 0x89, 0x8a, 0xfe, 0xff, 0x0f, 0x70];

/** A few byte flips, insertions, deletions or a cut, mostly near frame heads (the start). */
function mutate(g: Gen, input: Uint8Array): Uint8Array {
  let b = input.slice();
  for (let m = 1 + g.int(3); m > 0; m--) {
    if (b.length === 0) break;
    const at = g.int(g.chance(0.7) ? Math.min(b.length, 16) : b.length);
    switch (g.int(4)) {
      case 0:
        b[at] = g.int(256);
        break;
      case 1:
        b[at] = g.pick(INTERESTING);
        break;
      case 2:
        b = Uint8Array.from([...b.subarray(0, at), g.pick(INTERESTING), ...b.subarray(at)]);
        break;
      default:
        b = b.subarray(0, at);
    }
  }
  return b;
}

/** What reading gave: the frames (copied), then "more" (a wait) or the error's close code. */
interface Read {
  frames: Sent[];
  end: "more" | number;
}

/** Pushes `input` in pieces of at most `step` bytes, reading every complete frame after each. */
function read(input: Uint8Array, masked: boolean, step: number): Read {
  const r = new FrameReader(MAX_PAYLOAD, masked);
  const got: Sent[] = [];
  try {
    for (let i = 0; i < input.length; i += step) {
      r.push(input.subarray(i, i + step));
      for (let f = r.next(); f !== null; f = r.next()) {
        got.push({ fin: f.fin, opcode: f.opcode, payload: f.payload.slice() });
      }
    }
  } catch (err) {
    if (!(err instanceof FrameError)) throw err;
    assert.ok(err.code === 1002 || err.code === 1009, `close code ${err.code}`);
    return { frames: got, end: err.code };
  }
  return { frames: got, end: "more" };
}

/** Feeds frames on as scalwsd's tunnel does: only `FrameError` may come out. */
function assemble(got: readonly Frame[]): void {
  const a = new MessageAssembler(MAX_PAYLOAD);
  try {
    for (const f of got) {
      if (f.opcode === OP_CLOSE) parseClose(f.payload);
      else if (f.opcode === OP_PING || f.opcode === OP_PONG) continue;
      else {
        const whole = a.add(f);
        if (whole !== null && a.opcode === OP_TEXT) decodeText(whole);
      }
    }
  } catch (err) {
    if (!(err instanceof FrameError)) throw err;
  }
}

function sameFrames(a: readonly Sent[], b: readonly Sent[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i], y = b[i];
    if (x.fin !== y.fin || x.opcode !== y.opcode || x.payload.length !== y.payload.length) {
      return false;
    }
    for (let j = 0; j < x.payload.length; j++) if (x.payload[j] !== y.payload[j]) return false;
  }
  return true;
}

for (const masked of [false, true]) {
  const side = masked ? "a client's masked frames" : "a member's unmasked frames";
  Deno.test(`ws fuzz: ${side}, valid and mutated, read the same in any split`, () => {
    const g = new Gen(masked ? 0x5c1 : 0x5c2);
    const seen = { valid: 0, refused: 0, waiting: 0 };
    for (let i = 0; i < CASES; i++) {
      const sent = frames(g);
      const bytes = encode(g, sent, masked);
      const valid = i % 4 === 0;
      const input = valid ? bytes : mutate(g, bytes);
      const whole = read(input, masked, Math.max(1, input.length));
      const split = read(input, masked, 1 + g.int(g.chance(0.3) ? 3 : 300));
      assert.ok(sameFrames(whole.frames, split.frames), `case ${i}: split reads differ`);
      assert.equal(split.end, whole.end, `case ${i}`);
      if (valid) {
        assert.equal(whole.end, "more", `case ${i}: a valid sequence refused`);
        assert.ok(sameFrames(whole.frames, sent), `case ${i}: frames differ from those sent`);
        seen.valid++;
      } else if (whole.end === "more") seen.waiting++;
      else seen.refused++;
      assemble(whole.frames);
    }
    assert.ok(seen.refused > CASES / 10 && seen.waiting > CASES / 20, JSON.stringify(seen));
  });
}

Deno.test("ws fuzz: random bytes into the reader end in frames, a wait or a FrameError", () => {
  const g = new Gen(0x5c3);
  for (let i = 0; i < CASES; i++) {
    const input = new Uint8Array(1 + g.int(64)).map(() =>
      g.chance(0.5) ? g.pick(INTERESTING) : g.int(256)
    );
    const masked = g.chance(0.5);
    const whole = read(input, masked, input.length);
    const split = read(input, masked, 1 + g.int(8));
    assert.ok(sameFrames(whole.frames, split.frames), `case ${i}`);
    assert.equal(split.end, whole.end, `case ${i}`);
    assemble(whole.frames);
  }
});
