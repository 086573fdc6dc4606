import assert from "node:assert/strict";
import { ManualClock } from "../base/clock.ts";
import { FakeFactory, FakeSocket } from "./_fake_socket.ts";
import { ConnPool, SURPLUS_GRACE } from "./conn_pool.ts";
import type { Http1Conn } from "./member_conn.ts";

function factory(n: number): FakeFactory {
  return new FakeFactory(Array.from({ length: n }, () => new FakeSocket(new Uint8Array(0))));
}

async function openAll(pool: ConnPool, n: number): Promise<Http1Conn[]> {
  const out: Http1Conn[] = [];
  for (let i = 0; i < n; i++) out.push(await pool.open(100));
  return out;
}

Deno.test("ConnPool reuses the most recently released connection first", async () => {
  const clock = new ManualClock();
  const pool = new ConnPool(factory(3), { clock });
  const [a, b, c] = await openAll(pool, 3);
  assert.equal(pool.active, 3);
  pool.release(a, true);
  clock.advance(10);
  pool.release(b, true);
  clock.advance(10);
  pool.release(c, true);
  assert.equal(pool.idle, 3);
  assert.equal(pool.active, 0);
  clock.advance(5);
  assert.equal(pool.acquire(), c);
  assert.equal(c.idleFor, 5);
  assert.equal(pool.acquire(), b);
  assert.equal(b.idleFor, 15);
  assert.equal(pool.acquire(), a);
  assert.equal(pool.acquire(), null);
  assert.equal(pool.active, 3);
  pool.close();
});

Deno.test("ConnPool marks fresh connections with idleFor -1", async () => {
  const pool = new ConnPool(factory(1));
  const a = await pool.open(100);
  assert.equal(a.idleFor, -1);
  pool.release(a, false);
  pool.close();
});

Deno.test("ConnPool keeps at most maxIdle; a surplus is closed oldest first after its grace", async () => {
  const clock = new ManualClock();
  const pool = new ConnPool(factory(4), { maxIdle: 2, clock });
  const [a, b, c, d] = await openAll(pool, 4);
  pool.release(a, true);
  pool.release(b, true);
  pool.release(c, true);
  clock.advance(SURPLUS_GRACE - 1);
  pool.release(d, true);
  assert.equal(pool.idle, 4); // a burst's surplus is not closed at once
  pool.sweep();
  assert.equal(pool.idle, 4);
  clock.advance(1);
  pool.sweep(); // a, b, c sat idle for the grace; only a and b are beyond maxIdle
  assert.equal(pool.idle, 2);
  assert.equal((a.socket as FakeSocket).closed, true);
  assert.equal((b.socket as FakeSocket).closed, true);
  assert.equal((c.socket as FakeSocket).closed, false);
  assert.equal(pool.acquire(), d);
  assert.equal(pool.acquire(), c);
  pool.close();
});

Deno.test("ConnPool trims a surplus by itself on a timer", async () => {
  const pool = new ConnPool(factory(3), { maxIdle: 1 });
  const conns = await openAll(pool, 3);
  for (const c of conns) pool.release(c, true);
  assert.equal(pool.idle, 3);
  const until = Date.now() + 3000;
  while (pool.idle > 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  assert.equal(pool.idle, 1);
  assert.equal((conns[2].socket as FakeSocket).closed, false);
  pool.close();
});

Deno.test("ConnPool closes connections released as not reusable or with leftover bytes", async () => {
  const pool = new ConnPool(factory(2), { clock: new ManualClock() });
  const [a, b] = await openAll(pool, 2);
  pool.release(a, false);
  b.end = 3; // unread bytes after a response
  pool.release(b, true);
  assert.equal(pool.idle, 0);
  assert.equal(pool.active, 0);
  assert.equal((a.socket as FakeSocket).closed, true);
  assert.equal((b.socket as FakeSocket).closed, true);
  pool.release(a, true); // a second release is ignored
  assert.equal(pool.active, 0);
  pool.close();
});

Deno.test("ConnPool drops idle connections older than idleTimeout at acquire", async () => {
  const clock = new ManualClock();
  const pool = new ConnPool(factory(2), { idleTimeout: 1000, clock });
  const [a, b] = await openAll(pool, 2);
  pool.release(a, true);
  clock.advance(500);
  pool.release(b, true);
  clock.advance(999);
  assert.equal(pool.acquire(), b); // 999 ms idle: kept
  pool.release(b, true);
  clock.advance(1000);
  assert.equal(pool.acquire(), null); // both expired
  assert.equal(pool.idle, 0);
  assert.equal((a.socket as FakeSocket).closed, true);
  assert.equal((b.socket as FakeSocket).closed, true);
  pool.close();
});

Deno.test("ConnPool.sweep closes only expired idle connections", async () => {
  const clock = new ManualClock();
  const pool = new ConnPool(factory(2), { idleTimeout: 1000, clock });
  const [a, b] = await openAll(pool, 2);
  pool.release(a, true);
  clock.advance(600);
  pool.release(b, true);
  clock.advance(400);
  pool.sweep();
  assert.equal(pool.idle, 1);
  assert.equal((a.socket as FakeSocket).closed, true);
  assert.equal((b.socket as FakeSocket).closed, false);
  clock.advance(600);
  pool.sweep();
  assert.equal(pool.idle, 0);
  pool.close();
});

Deno.test("ConnPool sweeps by itself on a timer", async () => {
  const pool = new ConnPool(factory(1), { idleTimeout: 30 });
  const a = await pool.open(100);
  pool.release(a, true);
  const until = Date.now() + 2000;
  while (pool.idle > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  assert.equal(pool.idle, 0);
  assert.equal((a.socket as FakeSocket).closed, true);
  pool.close();
});

Deno.test("ConnPool.closeIdle and close; close also closes connections returned later", async () => {
  const pool = new ConnPool(factory(3), { clock: new ManualClock() });
  const [a, b, c] = await openAll(pool, 3);
  pool.release(a, true);
  pool.closeIdle();
  assert.equal(pool.idle, 0);
  assert.equal((a.socket as FakeSocket).closed, true);
  pool.release(b, true);
  assert.equal(pool.idle, 1);
  pool.close();
  assert.equal(pool.idle, 0);
  assert.equal((b.socket as FakeSocket).closed, true);
  pool.release(c, true);
  assert.equal(pool.idle, 0);
  assert.equal(pool.active, 0);
  assert.equal((c.socket as FakeSocket).closed, true);
});

Deno.test("ConnPool.detach takes a connection out without closing it", async () => {
  const pool = new ConnPool(factory(1));
  const a = await pool.open(100);
  pool.detach(a);
  assert.equal(pool.active, 0);
  assert.equal((a.socket as FakeSocket).closed, false);
  pool.close();
});
