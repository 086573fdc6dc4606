import assert from "node:assert/strict";
import { validateMembers } from "../config/members.ts";
import { agreement, MemberLists } from "./member_lists.ts";

const list = (...a: string[]) => validateMembers(a.map((address) => ({ address })), "").members!;
const pool = (name: string, ...a: string[]) => ({
  name,
  members_from: "api",
  members: a.map((address) => ({ address, weight: 1 })),
});

Deno.test("agreement compares every instance with the recorded lists, or with each other", () => {
  const recorded = new Map([["api", list("127.0.0.1:1", "127.0.0.1:2")]]);
  const a = agreement(recorded, [
    {
      id: "web-0",
      pools: [pool("api", "127.0.0.1:2", "127.0.0.1:1"), pool("seed", "127.0.0.1:9")],
    },
    { id: "web-1", pools: [pool("api", "127.0.0.1:1"), pool("seed", "127.0.0.1:9")] },
    { id: "web-2", pools: null },
  ]);
  assert.equal(a.agree, false);
  assert.deepEqual(a.instances, { "web-0": true, "web-1": false, "web-2": false });
  assert.deepEqual(a.pools.map((p) => [p.name, p.agree, p.instances]), [
    ["api", false, { "web-0": true, "web-1": false, "web-2": false }],
    ["seed", false, { "web-0": true, "web-1": true, "web-2": false }],
  ]);
  assert.equal(a.pools[1].recorded, null);
  const ok = agreement(recorded, [{
    id: "web-0",
    pools: [pool("api", "127.0.0.1:1", "127.0.0.1:2")],
  }]);
  assert.deepEqual([ok.agree, ok.instances], [true, { "web-0": true }]);
});

Deno.test("MemberLists records atomically, versions changes and tracks which processes hold them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-lists-" });
  try {
    const lists = new MemberLists(dir, () => 0);
    assert.equal(lists.inSync("web-0:1"), true, "nothing to hold yet");
    await lists.set("api", list("127.0.0.1:1"));
    assert.equal(lists.version, 1);
    assert.equal(lists.inSync("web-0:1"), false);
    lists.markSynced("web-0:1", 1);
    assert.equal(lists.inSync("web-0:1"), true);
    await lists.set("api", list("127.0.0.1:2"));
    assert.equal(lists.inSync("web-0:1"), false);
    assert.equal(lists.inSyncAt("web-0:1", 1), true);
    lists.prune(new Set());
    assert.equal(lists.inSyncAt("web-0:1", 1), false);
    assert.equal((await Deno.stat(`${dir}/upstreams/api.json`)).mode! & 0o777, 0o600);
    // A restarted controller reads them back for the api pools of its configuration.
    const again = new MemberLists(dir, () => 0);
    const api = { members_from: "api", scheme: "http" };
    // deno-lint-ignore no-explicit-any
    await again.load({ upstreams: { api, gone: { members_from: "file" } } } as any);
    assert.deepEqual(again.lists.get("api")!.map((m) => m.address), ["127.0.0.1:2"]);
    assert.equal(again.version, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
