import assert from "node:assert/strict";
import { MAX_MEMBERS, poolMemberErrors, validateMembers, validateMembersBody } from "./members.ts";

Deno.test("validateMembers canonicalises addresses and defaults the weight to 1", () => {
  const result = validateMembers([
    { address: "192.0.2.5:8080", weight: 2 },
    { address: "[2001:DB8::5]:8080" },
    { address: "Api-1.internal:80", weight: 1000 },
  ], "upstreams.api");
  assert.deepEqual(result.errors, []);
  assert.deepEqual(result.members?.map((m) => [m.address, m.weight]), [
    ["192.0.2.5:8080", 2],
    ["[2001:db8::5]:8080", 1],
    ["api-1.internal:80", 1000],
  ]);
  assert.equal(result.members?.[1].parsed.kind, "tcp");
  assert.ok(Object.isFrozen(result.members?.[0]));
  assert.ok(Object.isFrozen(result.members?.[0].parsed));
  assert.deepEqual(validateMembers([], ""), { members: [], errors: [] });
});

Deno.test("validateMembers names each entry with the admin API's exact messages", () => {
  const result = validateMembers([
    { address: "192.0.2.5:8080" },
    { address: "192.0.2.6:8080", weight: 1001 },
    { address: "192.0.2.05:8080" },
    { weight: 2 },
    { address: "192.0.2.5:8080" },
    { address: "192.0.2.7:8080", port: 1 },
    "192.0.2.8:8080",
    { address: 5, weight: 0 },
    { address: "192.0.2.9:8080", weight: 1.5 },
    { address: "192.0.2.10:8080", weight: "3" },
  ], "");
  assert.equal(result.members, undefined);
  assert.deepEqual(result.errors, [
    "members[1].weight: must be between 1 and 1000",
    'members[2].address: invalid address "192.0.2.05:8080": invalid IPv4 address "192.0.2.05"',
    "members[3].address: is required",
    'members[4].address: duplicate member "192.0.2.5:8080"',
    'members[5]: unknown key "port"',
    "members[6]: must be a mapping {address, weight}",
    "members[7].address: must be a string",
    "members[7].weight: must be between 1 and 1000",
    "members[8].weight: must be an integer",
    "members[9].weight: must be an integer",
  ]);
});

Deno.test("validateMembers prefixes the path and compares canonical forms for duplicates", () => {
  const result = validateMembers([
    { address: "[2001:db8::5]:8080" },
    { address: "[2001:DB8:0:0::5]:8080" },
    { address: "a:1", weight: 0 },
  ], "upstreams.api");
  assert.deepEqual(result.errors, [
    'upstreams.api.members[1].address: duplicate member "[2001:db8::5]:8080"',
    "upstreams.api.members[2].weight: must be between 1 and 1000",
  ]);
  assert.deepEqual(validateMembers({}, "upstreams.api").errors, [
    "upstreams.api.members: must be a list",
  ]);
});

Deno.test("validateMembers allows 10,000 members and refuses 10,001", () => {
  const list = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ address: `10.${i >> 8 & 255}.${i & 255}.1:80` }));
  const started = performance.now();
  const ok = validateMembers(list(MAX_MEMBERS), "upstreams.big");
  const elapsed = performance.now() - started;
  assert.equal(ok.members?.length, 10_000);
  assert.ok(elapsed < 500, `took ${elapsed} ms`);
  assert.deepEqual(validateMembers(list(MAX_MEMBERS + 1), "").errors, [
    "members: at most 10000 members allowed",
  ]);
});

Deno.test("poolMemberErrors allows a unix: member only alone in a plain-HTTP pool", () => {
  const one = validateMembers([{ address: "unix:/run/a.sock" }], "").members!;
  assert.deepEqual(poolMemberErrors(one, "http", "upstreams.a"), []);
  assert.deepEqual(poolMemberErrors(one, "https", "upstreams.a"), [
    "upstreams.a.members[0].address: a unix: member is only allowed with scheme: http",
  ]);
  const two = validateMembers([{ address: "10.0.0.1:80" }, { address: "unix:/run/a.sock" }], "")
    .members!;
  assert.deepEqual(poolMemberErrors(two, "http", ""), [
    "members[1].address: a unix: member must be the only member of its pool",
  ]);
});

Deno.test("validateMembersBody requires exactly {members: [...]}", () => {
  const shape = ['body: must be {"members": [...]}'];
  assert.deepEqual(validateMembersBody(null).errors, shape);
  assert.deepEqual(validateMembersBody([]).errors, shape);
  assert.deepEqual(validateMembersBody("x").errors, shape);
  assert.deepEqual(validateMembersBody({}).errors, shape);
  assert.deepEqual(validateMembersBody({ members: {} }).errors, shape);
  assert.deepEqual(validateMembersBody({ members: [], extra: 1 }).errors, [
    'body: unknown key "extra"',
  ]);
  assert.deepEqual(
    validateMembersBody(JSON.parse('{"members": [{"address": "192.0.2.5:8080", "weight": 0}]}'))
      .errors,
    ["members[0].weight: must be between 1 and 1000"],
  );
  const ok = validateMembersBody({ members: [{ address: "192.0.2.5:8080", weight: 2 }] });
  assert.deepEqual(ok.errors, []);
  assert.equal(ok.members?.[0].weight, 2);
});
