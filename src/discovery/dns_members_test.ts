import assert from "node:assert/strict";
import type { DnsConfig } from "../config/types.ts";
import type { DnsRecord, DnsResponse } from "./dns_message.ts";
import { membersFromAnswer, scaleSrvWeights } from "./dns_members.ts";

const base: DnsConfig = {
  name: "api.test",
  type: "A",
  port: 8080,
  refresh: "ttl",
  min_refresh: 1_000,
  max_refresh: 300_000,
  grace: 60_000,
};

function answer(answers: DnsRecord[], additional: DnsRecord[] = []): DnsResponse {
  return { id: 1, rcode: 0, truncated: false, answers, authority: [], additional };
}

const view = (r: ReturnType<typeof membersFromAnswer>) =>
  r.members.map((m) => `${m.address}=${m.weight}`);

Deno.test("membersFromAnswer: A records behind a CNAME, sorted, TTL the smallest used", () => {
  const r = membersFromAnswer(
    answer([
      { name: "api.test", type: 5, ttl: 300, target: "web.test" },
      { name: "web.test", type: 1, ttl: 20, address: "127.0.0.3" },
      { name: "web.test", type: 1, ttl: 30, address: "127.0.0.2" },
      { name: "other.test", type: 1, ttl: 1, address: "127.0.0.9" },
      { name: "web.test", type: 28, ttl: 1, address: "::1" },
    ]),
    base,
    "api.test",
  );
  assert.deepEqual(view(r), ["127.0.0.2:8080=1", "127.0.0.3:8080=1"]);
  assert.equal(r.ttl, 20);
});

Deno.test("membersFromAnswer: AAAA members are bracketed", () => {
  const r = membersFromAnswer(
    answer([{ name: "api.test", type: 28, ttl: 5, address: "::1" }]),
    { ...base, type: "AAAA", port: 81 },
    "api.test",
  );
  assert.deepEqual(view(r), ["[::1]:81=1"]);
});

Deno.test("membersFromAnswer: SRV takes the lowest priority, scales weights, uses additional addresses", () => {
  const srv = { ...base, type: "SRV" as const, port: undefined };
  const r = membersFromAnswer(
    answer(
      [
        {
          name: "api.test",
          type: 33,
          ttl: 60,
          priority: 10,
          weight: 60,
          port: 81,
          target: "a.test",
        },
        {
          name: "api.test",
          type: 33,
          ttl: 60,
          priority: 10,
          weight: 20,
          port: 82,
          target: "b.test",
        },
        {
          name: "api.test",
          type: 33,
          ttl: 60,
          priority: 10,
          weight: 0,
          port: 83,
          target: "c.test",
        },
        {
          name: "api.test",
          type: 33,
          ttl: 60,
          priority: 20,
          weight: 99,
          port: 84,
          target: "d.test",
        },
      ],
      [
        { name: "a.test", type: 1, ttl: 15, address: "127.0.0.1" },
        { name: "a.test", type: 1, ttl: 15, address: "127.0.0.2" },
      ],
    ),
    srv,
    "api.test",
  );
  assert.deepEqual(view(r), [
    "127.0.0.1:81=1000",
    "127.0.0.2:81=1000",
    "b.test:82=333",
    "c.test:83=1",
  ]);
  assert.equal(r.ttl, 15);
  // A target of "." means "no service here".
  const none = membersFromAnswer(
    answer([{ name: "api.test", type: 33, ttl: 60, priority: 0, weight: 0, port: 1, target: "" }]),
    srv,
    "api.test",
  );
  assert.deepEqual(none.members, []);
});

Deno.test("scaleSrvWeights keeps proportions inside 1..1000", () => {
  assert.deepEqual(scaleSrvWeights([65535, 1, 0]), [1000, 1, 1]);
  assert.deepEqual(scaleSrvWeights([0, 0]), [1, 1]);
  assert.deepEqual(scaleSrvWeights([5, 10]), [500, 1000]);
});
