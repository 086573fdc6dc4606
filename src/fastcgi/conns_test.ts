import assert from "node:assert/strict";
import { Connector } from "../http1/connector.ts";
import { watchdog } from "../http1/watchdog.ts";
import {
  activityOf,
  ClientTie,
  DEFAULT_MAX_CONNS,
  FcgiActivity,
  FcgiConns,
  FcgiQueueFull,
  learnMaxChildren,
} from "./conns.ts";

function conns(address: string, maxConns = 0, maxQueue = 256): FcgiConns {
  const a = { kind: "unix", path: address.slice(5), canonical: address } as const;
  return new FcgiConns(new Connector(a, null), { address, maxConns, maxQueue });
}

Deno.test("FcgiConns: slots up to max_conns, then waiters in arrival order", async () => {
  const c = conns("unix:/t/order.sock", 2);
  assert.equal(c.tryEnter(), true);
  assert.equal(c.tryEnter(), true);
  assert.equal(c.tryEnter(), false);
  const order: number[] = [];
  const waits = [1, 2, 3].map((i) => c.wait(5000).then((ok) => ok && order.push(i)));
  assert.equal(c.waiting, 3);
  c.leave();
  c.leave();
  await Promise.resolve();
  assert.deepEqual(order, [1, 2]);
  // Nobody jumps the queue while one waits.
  assert.equal(c.tryEnter(), false);
  c.leave();
  await Promise.all(waits);
  assert.deepEqual(order, [1, 2, 3]);
  assert.equal(c.busy, 2);
  assert.equal(c.waiting, 0);
  c.leave();
  c.leave();
  assert.equal(c.busy, 0);
});

Deno.test("FcgiConns: a full queue throws FcgiQueueFull; a wait times out", async () => {
  const c = conns("unix:/t/full.sock", 1, 1);
  assert.equal(c.tryEnter(), true);
  const first = c.wait(30);
  assert.throws(() => c.wait(1000), FcgiQueueFull);
  // The watchdog's timer does not keep a process alive (its requests' sockets do): this does.
  const alive = setTimeout(() => {}, 5000);
  assert.equal(await first, false);
  clearTimeout(alive);
  assert.equal(c.waiting, 0);
  // The timed-out waiter is skipped: the slot stays free for the next comer.
  c.leave();
  assert.equal(c.busy, 0);
  assert.equal(c.tryEnter(), true);
  c.leave();
});

Deno.test("FcgiConns: the limit is max_conns, else PHP-FPM's pm.max_children, else 8", () => {
  const set = conns("unix:/t/set.sock", 3);
  learnMaxChildren("unix:/t/set.sock", 5);
  assert.equal(set.limit, 3);
  const auto = conns("unix:/t/auto.sock");
  assert.equal(auto.limit, DEFAULT_MAX_CONNS);
  learnMaxChildren("unix:/t/auto.sock", 4);
  assert.equal(auto.limit, 4);
  learnMaxChildren("unix:/t/auto.sock", null);
  assert.equal(auto.limit, 8);
  learnMaxChildren("unix:/t/set.sock", null);
});

Deno.test("FcgiConns: a larger limit lets waiters in at the next leave", async () => {
  const c = conns("unix:/t/grow.sock", 1);
  assert.equal(c.tryEnter(), true);
  const a = c.wait(5000);
  const b = c.wait(5000);
  c.maxConns = 3;
  c.leave();
  assert.deepEqual(await Promise.all([a, b]), [true, true]);
  assert.equal(c.busy, 2);
});

Deno.test("FcgiActivity counts requests and calls each onNext once, at the next request", () => {
  const a = new FcgiActivity();
  const calls: string[] = [];
  const f = () => calls.push("f");
  const g = () => calls.push("g");
  a.onNext(f);
  a.onNext(g);
  a.cancel(g);
  a.count();
  a.count();
  assert.equal(a.requests, 2);
  assert.deepEqual(calls, ["f"]);
});

Deno.test("FcgiConns counts its requests in the address's activity unless told not to", () => {
  const address = "unix:/nonexistent/activity.sock";
  const counted = conns(address);
  const a = { kind: "unix", path: address.slice(5), canonical: address } as const;
  const not = new FcgiConns(new Connector(a, null), { address, counted: false });
  const before = activityOf(address).requests;
  assert.ok(counted.tryEnter());
  assert.ok(not.tryEnter());
  assert.equal(activityOf(address).requests, before + 1);
});

Deno.test("FcgiConns: a waiter's deadline is on the shared watchdog, disarmed when admitted or dropped", async () => {
  const c = conns("unix:/t/dog.sock", 1, 4);
  const before = watchdog.armed;
  assert.equal(c.tryEnter(), true);
  const admitted = c.wait(60_000);
  const tie = new ClientTie();
  const dropped = c.wait(60_000, tie);
  assert.equal(watchdog.armed, before + 2);
  c.leave();
  assert.equal(await admitted, true);
  tie.leave();
  assert.equal(await dropped, false);
  assert.equal(watchdog.armed, before);
  c.leave();
});
