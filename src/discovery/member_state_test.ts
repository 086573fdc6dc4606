import assert from "node:assert/strict";
import { validateMembers } from "../config/members.ts";
import { decodeMembers, encodeMembers, MemberState, MemberStateError } from "./member_state.ts";

const list = (...entries: { address: string; weight?: number; max_conns?: number }[]) =>
  validateMembers(entries, "").members!;

Deno.test("MemberState.save writes a 0600 file that load reads back with its time", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-state-" });
  try {
    const state = new MemberState(`${dir}/state`);
    const members = list({ address: "127.0.0.1:8080", weight: 3 }, { address: "[::1]:81" });
    await state.save("api", members, Date.parse("2026-12-01T12:00:00Z"));
    assert.equal((await Deno.stat(state.file("api"))).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(`${dir}/state`)).mode! & 0o777, 0o700);
    const back = await state.load("api", "http");
    assert.deepEqual(
      back!.members.map((m) => [m.address, m.weight]),
      [["127.0.0.1:8080", 3], ["[::1]:81", 1]],
    );
    assert.equal(back!.updated, Date.parse("2026-12-01T12:00:00Z"));
    await state.save("api", [], 5);
    assert.deepEqual((await state.load("api", "http"))!.members, []);
    assert.equal(await state.load("other", "http"), undefined);
    assert.deepEqual([...Deno.readDirSync(`${dir}/state/upstreams`)].map((e) => e.name), [
      "api.json",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("decodeMembers refuses whatever a PUT body would refuse, naming every problem", () => {
  const bad = (text: string, scheme: "http" | "https" = "http") => {
    try {
      decodeMembers("api", text, scheme);
    } catch (err) {
      assert.ok(err instanceof MemberStateError);
      return err.message;
    }
    assert.fail(`accepted ${text}`);
  };
  assert.equal(bad("{"), "invalid JSON");
  assert.equal(bad("[]"), "must be an object {pool, updated, members}");
  assert.equal(bad(""), "invalid JSON");
  assert.equal(
    bad('{"pool":"web","updated":"x","members":[{"address":"a:1","weight":0}],"extra":1}'),
    'unknown key "extra"; pool: must be "api"; updated: must be an ISO 8601 time; ' +
      "members[0].weight: must be between 1 and 1000",
  );
  assert.equal(
    bad('{"pool":"api","updated":"2026-12-01T00:00:00Z"}'),
    "members: must be a list",
  );
  assert.equal(
    bad(
      '{"pool":"api","updated":"2026-12-01T00:00:00Z","members":[{"address":"unix:/s"}]}',
      "https",
    ),
    "members[0].address: a unix: member is only allowed with scheme: http",
  );
});

Deno.test("encodeMembers and decodeMembers round trip", () => {
  const members = list({ address: "LOCALHOST:80", weight: 1000 });
  const back = decodeMembers("api", encodeMembers("api", members, 0), "http");
  assert.deepEqual(back.members.map((m) => m.address), ["localhost:80"]);
  assert.equal(back.members[0].weight, 1000);
  assert.equal(back.updated, 0);
});

Deno.test("a FastCGI pool's recorded list keeps max_conns and may hold several unix: members", () => {
  const members = list(
    { address: "unix:/run/php/a.sock", max_conns: 4 },
    { address: "unix:/run/php/b.sock" },
  );
  const text = encodeMembers("fpm", members, 0);
  const back = decodeMembers("fpm", text, "http", "fastcgi");
  assert.deepEqual(back.members.map((m) => [m.address, m.max_conns]), [
    ["unix:/run/php/a.sock", 4],
    ["unix:/run/php/b.sock", undefined],
  ]);
  assert.throws(() => decodeMembers("fpm", text, "http"), MemberStateError);
});
