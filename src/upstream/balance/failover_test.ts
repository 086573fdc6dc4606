import assert from "node:assert/strict";
import type { Candidate } from "../types.ts";
import { FailoverBalancer } from "./failover.ts";
import { ctx, makeMembers, manyMembers } from "./_testing.ts";

Deno.test("FailoverBalancer sends everything to the first member, ignoring weights", () => {
  const b = new FailoverBalancer(makeMembers("a:1 b:1000 c:5"));
  for (let i = 0; i < 20; i++) assert.equal(b.pick(ctx())!.address, "a");
});

Deno.test("FailoverBalancer falls to the next member in order and returns to the first", () => {
  const ms = makeMembers("a b c");
  const b = new FailoverBalancer(ms);
  ms[0].up = false;
  assert.equal(b.pick(ctx())!.address, "b");
  ms[1].up = false;
  assert.equal(b.pick(ctx())!.address, "c");
  ms[0].up = true;
  assert.equal(b.pick(ctx())!.address, "a");
});

Deno.test("FailoverBalancer skips tried members in order", () => {
  const ms = makeMembers("a b c");
  const b = new FailoverBalancer(ms);
  assert.equal(b.pick(ctx({ tried: new Set<Candidate>([ms[0]]) }))!.address, "b");
  assert.equal(b.pick(ctx({ tried: new Set<Candidate>([ms[0], ms[1]]) }))!.address, "c");
  assert.equal(b.pick(ctx({ tried: new Set<Candidate>(ms) })), undefined);
});

Deno.test("FailoverBalancer in a large pool follows availability with and without a version", () => {
  const ms = manyMembers(500);
  const b = new FailoverBalancer(ms);
  for (let i = 0; i < 300; i++) ms[i].up = false;
  assert.equal(b.pick(ctx()), ms[300]);
  assert.equal(b.pick(ctx({ version: 1 })), ms[300]);
  ms[42].up = true;
  assert.equal(b.pick(ctx({ version: 2 })), ms[42]);
  ms[42].up = false;
  ms[7].up = true;
  assert.equal(b.pick(ctx()), ms[7]);
  for (const m of ms) m.up = false;
  assert.equal(b.pick(ctx()), undefined);
});
