import assert from "node:assert/strict";
import {
  adminFetch,
  app,
  get,
  members,
  proxy,
  scalwsYaml,
  startMember,
  startMembers,
  startScalwsd,
  tempDir,
} from "./_support/mod.ts";
import { ManualClock } from "../src/base/clock.ts";
import { checkFile } from "../cli/check.ts";

/** Pool p, `pool` its settings, behind application a. */
function config(pool: Record<string, unknown>, server: Record<string, unknown> = {}): string {
  return scalwsYaml({ server, upstreams: { p: pool }, apps: [app(proxy("p"))] });
}

/** A member whose answers can be switched between up and 503/closed at run time. */
function switchable(name: string) {
  const state = { up: true };
  const m = startMember(
    name,
    () => state.up ? new Response(name) : new Response("down", { status: 503 }),
  );
  return Object.assign(m, { state });
}

Deno.test("failover sends everything to the first available member, the rest are backups in order", async () => {
  const clock = new ManualClock();
  await using a = switchable("a");
  await using b = switchable("b");
  await using c = switchable("c");
  await using s = await startScalwsd(
    config({
      balance: "failover",
      members: [
        { address: a.address, weight: 5 },
        { address: b.address },
        { address: c.address, weight: 9 },
      ],
      passive_health: { failures: 1, cooldown: "10s" },
      retries: 2,
    }),
    { clock },
  );
  for (let i = 0; i < 4; i++) {
    assert.equal((await get(s.url + "/", { host: "a.test" })).text, "a");
  }
  a.state.up = false;
  // The first request fails on a, is retried on b; a is ejected, b takes everything.
  for (let i = 0; i < 4; i++) {
    assert.equal((await get(s.url + "/", { host: "a.test" })).text, "b");
  }
  assert.equal(a.count, 5);
  b.state.up = false;
  for (let i = 0; i < 3; i++) {
    assert.equal((await get(s.url + "/", { host: "a.test" })).text, "c");
  }
  // a comes back after its cooldown and takes over again.
  a.state.up = true;
  clock.advance(10_001);
  for (let i = 0; i < 3; i++) {
    assert.equal((await get(s.url + "/", { host: "a.test" })).text, "a");
  }
});

Deno.test("active health checks take a member out after fall probes and back after rise", async () => {
  let bUp = true;
  await using a = startMember("a");
  await using b = startMember("b", (req) => {
    if (new URL(req.url).pathname === "/ping") {
      return new Response(bUp ? "pong" : "sick", { status: bUp ? 200 : 500 });
    }
    return new Response("b");
  });
  await using s = await startScalwsd(config({
    members: members(a, b),
    health_check: { path: "/ping", interval: "1h", timeout: "1s", rise: 2, fall: 2 },
  }));
  const sock = s.adminSocket;
  const pool = s.server.registry.pools.get("p")!;
  const view = async () => (await (await adminFetch(sock, "/v1/upstreams/p")).json()).members[1];
  const seen = new Set<string>();
  for (let i = 0; i < 4; i++) seen.add((await get(s.url + "/", { host: "a.test" })).text);
  assert.deepEqual([...seen].sort(), ["a", "b"]);

  bUp = false;
  await pool.prober!.runOnce();
  let m = await view();
  assert.equal(m.state, "healthy"); // one failed probe of fall 2
  assert.equal(m.active_health.fails, 1);
  await pool.prober!.runOnce();
  m = await view();
  assert.equal(m.state, "down");
  assert.equal(m.active_health.up, false);
  assert.equal(m.active_health.last_result, false);
  assert.ok(m.active_health.last_probe);
  assert.match(
    await (await adminFetch(sock, "/metrics")).text(),
    new RegExp(`scalws_upstream_member_healthy\\{pool="p",member="${b.address}"\\} 0`),
  );
  for (let i = 0; i < 4; i++) {
    assert.equal((await get(s.url + "/", { host: "a.test" })).text, "a");
  }

  bUp = true;
  await pool.prober!.runOnce();
  assert.equal((await view()).state, "down");
  await pool.prober!.runOnce();
  assert.equal((await view()).state, "healthy");
  seen.clear();
  for (let i = 0; i < 4; i++) seen.add((await get(s.url + "/", { host: "a.test" })).text);
  assert.deepEqual([...seen].sort(), ["a", "b"]);
});

Deno.test("a TCP probe marks a closed member down; with every member down requests are still tried", async () => {
  const a = startMember("a");
  const dead = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const deadAddr = `127.0.0.1:${(dead.addr as Deno.NetAddr).port}`;
  dead.close();
  await using s = await startScalwsd(config({
    balance: "failover",
    members: members(deadAddr, a),
    health_check: { interval: "1h", timeout: "500ms", rise: 1, fall: 1 },
  }));
  const pool = s.server.registry.pools.get("p")!;
  await pool.prober!.runOnce();
  const view = (await (await adminFetch(s.adminSocket, "/v1/upstreams/p")).json()).members;
  assert.deepEqual(view.map((m: { state: string }) => m.state), ["down", "healthy"]);
  assert.equal((await get(s.url + "/", { host: "a.test" })).text, "a");
  // Both down by probe: fail-open, the request is still attempted in order.
  await a.close();
  await pool.prober!.runOnce();
  const r = await get(s.url + "/", { host: "a.test" });
  assert.equal(r.status, 502);
});

Deno.test("sticky pins a client to its first member until the TTL, then re-assigns", async () => {
  const clock = new ManualClock(1_700_000_000_000);
  await using ms = startMembers(["a", "b", "c"]);
  await using s = await startScalwsd(
    config({ members: members(...ms), sticky: { ttl: "30m", cookie: "PIN" } }),
    { clock },
  );
  const first = await get(s.url + "/", { host: "a.test" });
  const set = first.headers.get("set-cookie")!;
  const m = /^PIN=([^;]+); Path=\/; HttpOnly; SameSite=Lax; Max-Age=1800$/.exec(set);
  assert.ok(m, set);
  const pin = m[1];
  for (let i = 0; i < 5; i++) {
    const r = await get(s.url + "/", { host: "a.test", cookie: `PIN=${pin}` });
    assert.equal(r.text, first.text);
    assert.equal(r.headers.get("set-cookie"), null, "an honoured pin adds no Set-Cookie");
  }
  // Edited pins are not honoured: a new assignment with a new cookie.
  const forged = pin.slice(0, -2) + (pin.endsWith("00") ? "11" : "00");
  const r = await get(s.url + "/", { host: "a.test", cookie: `PIN=${forged}` });
  assert.ok(r.headers.get("set-cookie")?.startsWith("PIN="));
  // The window is fixed from assignment: past 30 minutes the same cookie is re-assigned.
  clock.advance(29 * 60_000);
  assert.equal(
    (await get(s.url + "/", { host: "a.test", cookie: `PIN=${pin}` })).headers.get("set-cookie"),
    null,
  );
  clock.advance(2 * 60_000);
  const late = await get(s.url + "/", { host: "a.test", cookie: `PIN=${pin}` });
  assert.match(late.headers.get("set-cookie")!, /^PIN=/);
  assert.notEqual(/^PIN=([^;]+)/.exec(late.headers.get("set-cookie")!)![1], pin);
});

Deno.test("a pin to a member that is gone is re-picked", async () => {
  await using a = startMember("a");
  await using b = startMember("b");
  await using s = await startScalwsd(config({
    members_from: "api",
    members: members(a, b),
    sticky: { ttl: "12h" },
  }));
  const sock = s.adminSocket;
  const first = await get(s.url + "/", { host: "a.test" });
  const cookie = first.headers.get("set-cookie")!.split(";")[0];
  assert.match(cookie, /^SCALWS_STICKY_p=/);
  const keep = first.text === "a" ? b : a;
  await adminFetch(sock, "/v1/upstreams/p", {
    method: "PUT",
    body: JSON.stringify({ members: [{ address: keep.address }] }),
  });
  const r = await get(s.url + "/", { host: "a.test", cookie });
  assert.equal(r.text, first.text === "a" ? "b" : "a");
  assert.match(r.headers.get("set-cookie")!, /^SCALWS_STICKY_p=/);
});

Deno.test("server.affinity_key_file makes two instances agree on affinity cookies", async () => {
  await using dir = await tempDir();
  await using a = startMember("a");
  await using b = startMember("b");
  const yaml = config(
    { members: members(a, b), balance: "hash", hash: { by: "cookie" } },
    { affinity_key_file: `${dir.path}/affinity.key` },
  );
  await using one = await startScalwsd(yaml);
  await using two = await startScalwsd(yaml);
  assert.equal((await Deno.stat(`${dir.path}/affinity.key`)).mode! & 0o777, 0o600);
  const r = await get(one.url + "/", { host: "a.test" });
  const cookie = r.headers.get("set-cookie")!.split(";")[0];
  for (let i = 0; i < 4; i++) {
    const other = await get(two.url + "/", { host: "a.test", cookie });
    assert.equal(other.text, r.text);
    assert.equal(other.headers.get("set-cookie"), null);
  }
});

Deno.test("an unusable server.affinity_key_file is refused by check and at start, naming the key", async () => {
  await using dir = await tempDir();
  const short = `${dir.path}/short.key`;
  await Deno.writeTextFile(short, "abc\n");
  const missingDir = `${dir.path}/nowhere/affinity.key`;
  const fresh = `${dir.path}/fresh.key`;
  const cases: [string, RegExp][] = [
    [short, /server\.affinity_key_file: ".*short\.key" holds 3 bytes, at least 16 needed$/],
    [missingDir, /server\.affinity_key_file: cannot create ".*nowhere\/affinity\.key": /],
  ];
  for (const [path, message] of cases) {
    const file = `${dir.path}/scalws.yaml`;
    await Deno.writeTextFile(file, config({ members: [] }, { affinity_key_file: path }));
    const { errors } = await checkFile(file);
    assert.equal(errors.length, 1, path);
    assert.match(errors[0], message);
    await assert.rejects(
      startScalwsd(config({ members: [] }, { affinity_key_file: path })),
      (err: Error) => message.test(String(err.message)),
    );
  }
  // check creates nothing: the key file is made by the first start.
  await Deno.writeTextFile(
    `${dir.path}/ok.yaml`,
    config({ members: [] }, { affinity_key_file: fresh }),
  );
  assert.deepEqual((await checkFile(`${dir.path}/ok.yaml`)).errors, []);
  await assert.rejects(Deno.stat(fresh), Deno.errors.NotFound);
});

Deno.test("with every member down, a hash pool still tries each key's own member first (preference order)", async () => {
  let sick = false;
  await using ms = startMembers(["a", "b", "c"], (name) => (req) => {
    if (new URL(req.url).pathname === "/ping") {
      return new Response(sick ? "sick" : "pong", { status: sick ? 500 : 200 });
    }
    return new Response(name);
  });
  await using s = await startScalwsd(config({
    members: members(...ms),
    balance: "hash",
    hash: { by: "header", name: "X-User" },
    health_check: { path: "/ping", interval: "1h", rise: 1, fall: 1 },
  }));
  const keys = Array.from({ length: 12 }, (_, i) => `user-${i}`);
  const member = async (key: string) =>
    (await get(s.url + "/", { host: "a.test", "x-user": key })).text;
  const healthy = new Map<string, string>();
  for (const k of keys) healthy.set(k, await member(k));
  assert.ok(new Set(healthy.values()).size > 1, "the keys spread over several members");
  sick = true;
  await s.server.registry.pools.get("p")!.prober!.runOnce();
  const view = (await (await adminFetch(s.adminSocket, "/v1/upstreams/p")).json()).members;
  assert.deepEqual(view.map((m: { state: string }) => m.state), ["down", "down", "down"]);
  // Fail-open keeps the keys where they were: a client's member does not change.
  for (const k of keys) assert.equal(await member(k), healthy.get(k), k);
});
