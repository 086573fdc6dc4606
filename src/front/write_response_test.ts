import assert from "node:assert/strict";
import { FrontAnswer } from "./answer.ts";
import { type ClientSocket, writeAnswer } from "./write_response.ts";
import { claimHeadRoom, withHeadRoom } from "../wire/mod.ts";

/** A client socket that records each write (copied at the time it is made). */
class Recorder implements ClientSocket {
  writes: Uint8Array[] = [];
  read(): Promise<number | null> {
    return Promise.resolve(null);
  }
  write(p: Uint8Array): Promise<number> {
    this.writes.push(p.slice());
    return Promise.resolve(p.length);
  }
  close(): void {}
  get text(): string {
    return this.writes.map((w) => new TextDecoder("latin1").decode(w)).join("");
  }
}

function body(n: number): Uint8Array {
  const b = withHeadRoom(n);
  for (let i = 0; i < n; i++) b[i] = 97 + (i % 26);
  return b;
}

Deno.test("writeAnswer: a body with head room goes out with its head in one write, intact", async () => {
  const b = body(70_000);
  const want = new TextDecoder().decode(b);
  const c = new Recorder();
  const req = { method: "GET", minor: 1 };
  assert.equal(await writeAnswer(c, new FrontAnswer(200, [["x-a", "1"]], b), req, true), true);
  assert.equal(c.writes.length, 1);
  const [head, rest] = c.text.split("\r\n\r\n");
  assert.match(head, /^HTTP\/1\.1 200 OK\r\nx-a: 1\r\ndate: .*\r\ncontent-length: 70000$/);
  assert.equal(rest, want);
  // Written: its buffer serves the next body with head room.
  assert.ok(withHeadRoom(69_000).buffer === b.buffer, "not reused");
});

Deno.test("writeAnswer: a head-room body whose room was claimed already is copied behind its head", async () => {
  const b = body(20_000);
  const want = new TextDecoder().decode(b);
  assert.notEqual(claimHeadRoom(b, 10), null);
  const c = new Recorder();
  await writeAnswer(c, new FrontAnswer(200, [["x-b", "2"]], b), { method: "GET", minor: 1 }, true);
  assert.equal(c.writes.length, 1);
  assert.equal(c.text.split("\r\n\r\n")[1], want);
});

Deno.test("writeAnswer: a head with characters past Latin-1 never spills into a head-room body", async () => {
  const b = body(30);
  const want = new TextDecoder().decode(b);
  const c = new Recorder();
  const a = new FrontAnswer(200, [["x-name", "\u4e2d\u6587\u4e2d\u6587"]], b);
  await writeAnswer(c, a, { method: "GET", minor: 1 }, true);
  assert.equal(new TextDecoder().decode(b), want);
  const all = c.writes.reduce((n, w) => n + w.length, 0);
  assert.equal(c.text.slice(all - 30), want);
});
