import assert from "node:assert/strict";
import type { BodyPull } from "../http1/types.ts";
import { ClientBody, readSmallBody, readWhole } from "./client_body.ts";

const enc = new TextEncoder();

/** The watchdog's timer does not keep the process alive: a test waiting on it needs one that does. */
async function awake<T>(p: Promise<T>): Promise<T> {
  const keep = setTimeout(() => {}, 5000);
  try {
    return await p;
  } finally {
    clearTimeout(keep);
  }
}

/** Chunks from `parts`; then the end, or a read that waits until cancelled (`hang`). */
class Parts implements BodyPull {
  cancelled = false;
  private wake: ((v: null) => void) | null = null;
  constructor(private readonly parts: string[], private readonly hang = false) {}
  read(): Promise<Uint8Array | null> {
    const p = this.parts.shift();
    if (p !== undefined) return Promise.resolve(enc.encode(p));
    if (!this.hang) return Promise.resolve(null);
    return new Promise((r) => (this.wake = r));
  }
  cancel(): void {
    this.cancelled = true;
    this.wake?.(null);
  }
}

/** The same with `readInto`, counting how it was read. */
class Direct extends Parts {
  intos = 0;
  private readonly all: Uint8Array;
  private at = 0;
  constructor(text: string) {
    super([]);
    this.all = enc.encode(text);
  }
  readInto(into: Uint8Array): Promise<number | null> {
    this.intos++;
    if (this.at === this.all.length) return Promise.resolve(null);
    const n = Math.min(3, into.length, this.all.length - this.at);
    into.set(this.all.subarray(this.at, this.at + n));
    this.at += n;
    return Promise.resolve(n);
  }
}

Deno.test("readSmallBody joins chunks, and refuses more than the length", async () => {
  const ok = await readSmallBody(new Parts(["ab", "cd"]), 4);
  assert.equal(new TextDecoder().decode(ok as Uint8Array), "abcd");
  const long = new Parts(["ab", "cde"]);
  assert.equal(await readSmallBody(long, 4), "too_large");
  assert.equal(long.cancelled, true);
  assert.equal(await readSmallBody(new Parts(["ab"]), 4), "aborted");
});

Deno.test("readSmallBody reads straight into its buffer when the body can", async () => {
  const body = new Direct("abcdefgh");
  const out = await readSmallBody(body, 8);
  assert.equal(new TextDecoder().decode(out as Uint8Array), "abcdefgh");
  // 3 + 3 + 2 bytes, and no read past the length.
  assert.equal(body.intos, 3);
});

Deno.test("readSmallBody: timeout when the whole body is late, stalled when a chunk is", async () => {
  const late = new Parts(["ab"], true);
  assert.equal(await readSmallBody(late, 4, 30), "timeout");
  assert.equal(late.cancelled, true);
  const stalled = new Parts(["ab"], true);
  assert.equal(await awake(readSmallBody(stalled, 4, 0, 30)), "stalled");
  assert.equal(stalled.cancelled, true);
});

Deno.test("ClientBody counts, caps at max and fails a stalled read", async () => {
  const body = new ClientBody(new Parts(["abc", "de"]), 4);
  assert.equal((await body.read())!.length, 3);
  await assert.rejects(body.read(), /too large/);
  assert.equal(body.failure, "too_large");

  const slow = new ClientBody(new Parts(["a"], true), 100, 30);
  assert.equal((await slow.read())!.length, 1);
  await assert.rejects(awake(slow.read()), /stalled/);
  assert.equal(slow.failure, "stalled");

  const done = new ClientBody(new Parts(["a"]), 100);
  await done.read();
  assert.equal(await done.read(), null);
  assert.equal(done.done, true);
});

Deno.test("readWhole keeps every chunk", async () => {
  const all = await readWhole(new Parts(["ab", "", "cd"]));
  assert.equal(new TextDecoder().decode(all), "abcd");
});
