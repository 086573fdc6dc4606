import assert from "node:assert/strict";
import { ResetWatch, WATCH_AFTER } from "./reset_watch.ts";

/** A request whose signal reads are counted. */
function request(c: AbortController): { req: Request; reads: () => number } {
  let reads = 0;
  const req = {
    get signal() {
      reads++;
      return c.signal;
    },
  } as unknown as Request;
  return { req, reads: () => reads };
}

function answer(): Response {
  return new Response("ok");
}

Deno.test("ResetWatch: a handler that answers within WATCH_AFTER never reads the signal", async () => {
  let now = 0;
  const w = new ResetWatch(() => now, WATCH_AFTER);
  const c = new AbortController();
  const r = request(c);
  let resets = 0;
  const res = await w.watch(r.req, Promise.resolve(answer()), () => resets++);
  assert.deepEqual(res.status, 200);
  now = 10 * WATCH_AFTER;
  w.look();
  c.abort();
  assert.deepEqual([r.reads(), resets, w.waiting], [0, 0, 0]);
});

Deno.test("ResetWatch: a reset of a slow handler's stream counts once, before or after the look", async () => {
  let now = 0;
  const w = new ResetWatch(() => now, WATCH_AFTER);
  let resets = 0;
  const before = new AbortController();
  const after = new AbortController();
  const young = new AbortController();
  const a = request(before);
  const b = request(after);
  let finish!: (r: Response) => void;
  const slow = new Promise<Response>((r) => finish = r);
  const pa = w.watch(a.req, slow, () => resets++);
  const pb = w.watch(b.req, slow, () => resets++);
  now = WATCH_AFTER - 1;
  const y = request(young);
  const py = w.watch(y.req, slow, () => resets++);
  before.abort();
  now = WATCH_AFTER;
  w.look();
  // The first is seen aborted at the look, the second is listened to, the third is too young.
  assert.deepEqual([a.reads(), b.reads(), y.reads(), resets, w.waiting], [1, 1, 0, 1, 1]);
  after.abort();
  assert.deepEqual(resets, 2);
  finish(answer());
  await Promise.all([pa, pb, py]);
  // Deno's legacy abort after the answer is not a reset.
  young.abort();
  assert.deepEqual([resets, w.waiting], [2, 0]);
});

Deno.test("ResetWatch: an abort once the handler answered is not counted", async () => {
  let now = 0;
  const w = new ResetWatch(() => now, WATCH_AFTER);
  const c = new AbortController();
  const r = request(c);
  let resets = 0;
  let finish!: (r: Response) => void;
  const p = w.watch(r.req, new Promise<Response>((res) => finish = res), () => resets++);
  now = 2 * WATCH_AFTER;
  w.look();
  finish(answer());
  await p;
  c.abort();
  assert.deepEqual([r.reads(), resets], [1, 0]);
});

Deno.test("ResetWatch: a failed handler's rejection passes through", async () => {
  const w = new ResetWatch(() => 0, WATCH_AFTER);
  const c = new AbortController();
  let caught = "";
  await w.watch(request(c).req, Promise.reject(new Error("boom")), () => {}).catch((e) =>
    caught = (e as Error).message
  );
  assert.deepEqual([caught, w.waiting], ["boom", 0]);
});
