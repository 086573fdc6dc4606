import assert from "node:assert/strict";
import { adminFetch, get, startMember, startScalwsd } from "./_harness.ts";
import { ManualClock } from "../src/base/clock.ts";

function config(pool: string): string {
  return `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
  admin: {socket: "{{dir}}/admin.sock"}
upstreams:
  p:
${pool}
tenants:
  - name: t
    applications:
      - {name: a, domains: [a.test], runtime: {type: proxy, upstream: {pool: p}}}
`;
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
  const a = switchable("a");
  const b = switchable("b");
  const c = switchable("c");
  const s = await startScalwsd(
    config(`
    balance: failover
    members: [{address: "${a.address}", weight: 5}, {address: "${b.address}"}, {address: "${c.address}", weight: 9}]
    passive_health: {failures: 1, cooldown: 10s}
    retries: 2
`),
    { clock },
  );
  try {
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
  } finally {
    await s.close();
    for (const m of [a, b, c]) await m.close();
  }
});

Deno.test("active health checks take a member out after fall probes and back after rise", async () => {
  let bUp = true;
  const a = startMember("a");
  const b = startMember("b", (req) => {
    if (new URL(req.url).pathname === "/ping") {
      return new Response(bUp ? "pong" : "sick", { status: bUp ? 200 : 500 });
    }
    return new Response("b");
  });
  const s = await startScalwsd(config(`
    members: [{address: "${a.address}"}, {address: "${b.address}"}]
    health_check: {path: /ping, interval: 1h, timeout: 1s, rise: 2, fall: 2}
`));
  const sock = `${s.dir}/admin.sock`;
  const pool = s.server.registry.pools.get("p")!;
  const view = async () => (await (await adminFetch(sock, "/v1/upstreams/p")).json()).members[1];
  try {
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
  } finally {
    await s.close();
    await a.close();
    await b.close();
  }
});

Deno.test("a TCP probe marks a closed member down; with every member down requests are still tried", async () => {
  const a = startMember("a");
  const dead = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const deadAddr = `127.0.0.1:${(dead.addr as Deno.NetAddr).port}`;
  dead.close();
  const s = await startScalwsd(config(`
    balance: failover
    members: [{address: "${deadAddr}"}, {address: "${a.address}"}]
    health_check: {interval: 1h, timeout: 500ms, rise: 1, fall: 1}
`));
  const pool = s.server.registry.pools.get("p")!;
  try {
    await pool.prober!.runOnce();
    const members =
      (await (await adminFetch(`${s.dir}/admin.sock`, "/v1/upstreams/p")).json()).members;
    assert.deepEqual(members.map((m: { state: string }) => m.state), ["down", "healthy"]);
    assert.equal((await get(s.url + "/", { host: "a.test" })).text, "a");
    // Both down by probe: fail-open, the request is still attempted in order.
    await a.close();
    await pool.prober!.runOnce();
    const r = await get(s.url + "/", { host: "a.test" });
    assert.equal(r.status, 502);
  } finally {
    await s.close();
  }
});

Deno.test("sticky pins a client to its first member until the TTL, then re-assigns", async () => {
  const clock = new ManualClock(1_700_000_000_000);
  const ms = ["a", "b", "c"].map((n) => startMember(n));
  const s = await startScalwsd(
    config(`
    members: [{address: "${ms[0].address}"}, {address: "${ms[1].address}"}, {address: "${
      ms[2].address
    }"}]
    sticky: {ttl: 30m, cookie: PIN}
`),
    { clock },
  );
  try {
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
  } finally {
    await s.close();
    for (const m of ms) await m.close();
  }
});

Deno.test("a pin to a member that is gone is re-picked", async () => {
  const a = startMember("a");
  const b = startMember("b");
  const yaml = (members: string) =>
    config(`
    members_from: api
    members: [${members}]
    sticky: {ttl: 12h}
`);
  const s = await startScalwsd(yaml(`{address: "${a.address}"}, {address: "${b.address}"}`));
  const sock = `${s.dir}/admin.sock`;
  try {
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
  } finally {
    await s.close();
    await a.close();
    await b.close();
  }
});

Deno.test("server.affinity_key_file makes two instances agree on affinity cookies", async () => {
  const dir = await Deno.makeTempDir();
  const a = startMember("a");
  const b = startMember("b");
  const yaml = `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
  admin: {socket: "{{dir}}/admin.sock"}
  affinity_key_file: ${dir}/affinity.key
upstreams:
  p:
    members: [{address: "${a.address}"}, {address: "${b.address}"}]
    balance: hash
    hash: {by: cookie}
tenants:
  - name: t
    applications:
      - {name: a, domains: [a.test], runtime: {type: proxy, upstream: {pool: p}}}
`;
  const one = await startScalwsd(yaml);
  const two = await startScalwsd(yaml);
  try {
    assert.equal((await Deno.stat(`${dir}/affinity.key`)).mode! & 0o777, 0o600);
    const r = await get(one.url + "/", { host: "a.test" });
    const cookie = r.headers.get("set-cookie")!.split(";")[0];
    for (let i = 0; i < 4; i++) {
      const other = await get(two.url + "/", { host: "a.test", cookie });
      assert.equal(other.text, r.text);
      assert.equal(other.headers.get("set-cookie"), null);
    }
  } finally {
    await one.close();
    await two.close();
    await a.close();
    await b.close();
    await Deno.remove(dir, { recursive: true });
  }
});
