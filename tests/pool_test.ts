import assert from "node:assert/strict";
import {
  adminFetch,
  app,
  get,
  httpsListener,
  members,
  proxy,
  rawServer,
  readHead,
  request,
  scalwsYaml,
  sleep,
  startMember,
  startMembers,
  startPki,
  startScalwsd,
  waitUntil,
} from "./_support/mod.ts";
import { ManualClock } from "../src/base/clock.ts";
import { curl } from "./_support/tls_client.ts";

/** Pools `upstreams` behind application a (default runtime: a proxy to pool p). */
function config(upstreams: Record<string, unknown>, runtime: unknown = proxy("p")): string {
  return scalwsYaml({ upstreams, apps: [app(runtime)] });
}

async function metrics(sock: string): Promise<string> {
  return await (await adminFetch(sock, "/metrics")).text();
}

Deno.test("round_robin with weights 5,1,1 gives a a b a c a a through real members", async () => {
  await using ms = startMembers(["a", "b", "c"]);
  await using s = await startScalwsd(config({
    p: { members: [{ address: ms[0].address, weight: 5 }, ...members(ms[1], ms[2])] },
  }));
  const seq: string[] = [];
  for (let i = 0; i < 14; i++) seq.push((await get(s.url + "/", { host: "a.test" })).text);
  assert.equal(seq.join(" "), "a a b a c a a a a b a c a a");
});

Deno.test("a file pool without members answers 503 with Retry-After: 1", async () => {
  await using s = await startScalwsd(config({ p: { members: [] } }));
  const r = await get(s.url + "/", { host: "a.test" });
  assert.equal(r.status, 503);
  assert.equal(r.headers.get("retry-after"), "1");
});

Deno.test("hash by cookie sets SCALWS_AFFINITY once and keeps the client on its member", async () => {
  await using ms = startMembers(
    ["a", "b"],
    (n) => () => new Response(n, { headers: { "set-cookie": `own=${n}` } }),
  );
  await using s = await startScalwsd(config({
    p: { members: members(...ms), balance: "hash", hash: { by: "cookie" } },
  }));
  const res = await get(s.url + "/", { host: "a.test" });
  const first = res.text;
  const cookies = res.headers.getSetCookie();
  assert.equal(cookies.length, 2);
  assert.equal(cookies[0], `own=${first}`);
  const m = /^SCALWS_AFFINITY=([0-9a-f]{32}); Path=\/; HttpOnly; SameSite=Lax$/.exec(cookies[1]);
  assert.ok(m, cookies[1]);
  for (let i = 0; i < 6; i++) {
    const r = await get(s.url + "/", { host: "a.test", cookie: `SCALWS_AFFINITY=${m![1]}` });
    assert.equal(r.text, first);
    assert.deepEqual(r.headers.getSetCookie(), [`own=${first}`]);
  }
  // A cookie naming no member is replaced.
  const r = await get(s.url + "/", {
    host: "a.test",
    cookie: `SCALWS_AFFINITY=${"0".repeat(32)}`,
  });
  assert.match(
    r.headers.getSetCookie()[1],
    /^SCALWS_AFFINITY=[0-9a-f]{32}; Path=\/; HttpOnly; SameSite=Lax$/,
  );
});

Deno.test("the affinity cookie: Secure over HTTPS, none on scalwsd's own 502, replaced when its member is ejected", async () => {
  await using pki = await startPki();
  const cert = await pki.issue("a", ["a.test"]);
  await using ms = startMembers(["a", "b"]);
  const deadPort = ms[1].port;
  await using s = await startScalwsd(scalwsYaml({
    // Two addresses: two listeners on 127.0.0.1:0 would be one address to scalwsd.
    server: { listeners: [{ name: "http", address: "127.0.0.2:0" }, httpsListener(cert)] },
    upstreams: {
      p: {
        members: members(...ms),
        balance: "hash",
        hash: { by: "cookie", name: "SHOP_NODE" },
        passive_health: { failures: 1, cooldown: "1h" },
      },
      gone: { members: [{ address: "127.0.0.1:9" }], balance: "hash", hash: { by: "cookie" } },
    },
    apps: [app(proxy("p"), { routes: [{ path: "/gone", runtime: proxy("gone") }] })],
  }));
  const https = s.server.bound.get("https")!.port;
  const plain = `http://127.0.0.2:${s.server.bound.get("http")!.port}`;
  const tls = await curl(https, pki.caFile, "a.test", "/");
  assert.equal(tls.status, 200);
  assert.match(
    tls.headers,
    /\r\nset-cookie: SHOP_NODE=[0-9a-f]{32}; Path=\/; HttpOnly; SameSite=Lax; Secure\r?$/im,
  );
  // No member answered: scalwsd's own 502 sets no cookie.
  const own = await get(plain + "/gone", { host: "a.test" });
  assert.equal(own.status, 502);
  assert.deepEqual(own.headers.getSetCookie(), []);
  // A cookie for b while b is ejected: a goes on with the request and a new cookie naming a.
  let cookieB = "";
  for (let i = 0; i < 4 && cookieB === ""; i++) {
    const r = await get(plain + "/", { host: "a.test" });
    if (r.text === "b") cookieB = r.headers.get("set-cookie")!.split(";")[0];
  }
  assert.notEqual(cookieB, "");
  await ms[1].close();
  const first = await get(plain + "/", { host: "a.test", cookie: cookieB });
  assert.equal(first.text, "a");
  const pool = await (await adminFetch(s.adminSocket, "/v1/upstreams/p")).json();
  assert.equal(pool.members[1].address, `127.0.0.1:${deadPort}`);
  assert.equal(pool.members[1].state, "ejected");
  const after = await get(plain + "/", { host: "a.test", cookie: cookieB });
  assert.equal(after.text, "a");
  const set = after.headers.get("set-cookie")!;
  assert.match(set, /^SHOP_NODE=[0-9a-f]{32}; Path=\/; HttpOnly; SameSite=Lax$/);
  assert.notEqual(set.split(";")[0], cookieB);
  // The new cookie holds: no Set-Cookie again.
  const held = await get(plain + "/", { host: "a.test", cookie: set.split(";")[0] });
  assert.equal(held.text, "a");
  assert.equal(held.headers.get("set-cookie"), null);
});

Deno.test("hash cookie_max_age adds Max-Age", async () => {
  await using m = startMember("a");
  await using s = await startScalwsd(config({
    p: {
      members: members(m),
      balance: "hash",
      hash: { by: "cookie", name: "SHOP_NODE", cookie_max_age: "1d" },
    },
  }));
  const r = await get(s.url + "/", { host: "a.test" });
  assert.match(
    r.headers.get("set-cookie")!,
    /^SHOP_NODE=[0-9a-f]{32}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=86400$/,
  );
});

Deno.test("503 from a member is retried on another member for GET, counted in metrics", async () => {
  await using bad = startMember("bad", () => new Response("down", { status: 503 }));
  await using good = startMember("good");
  await using s = await startScalwsd(config({ p: { members: members(bad, good), retries: 1 } }));
  for (let i = 0; i < 4; i++) {
    const r = await get(s.url + "/", { host: "a.test" });
    assert.equal(r.status, 200);
    assert.equal(r.text, "good");
  }
  const text = await metrics(s.adminSocket);
  assert.match(text, /scalws_upstream_pool_retries_total\{pool="p"\} 2/);
  assert.match(
    text,
    new RegExp(
      `scalws_upstream_requests_total\\{pool="p",member="${bad.address}",class="5xx"\\} 2`,
    ),
  );
});

Deno.test("a POST is not retried after a 503, and the client gets the member's answer", async () => {
  await using bad = startMember("bad", () => new Response("down", { status: 503 }));
  await using s = await startScalwsd(config({
    p: { members: members(bad, bad.address.replace("127.0.0.1", "localhost")), retries: 1 },
  }));
  const r = await request(s.url + "/", {
    method: "POST",
    headers: { host: "a.test" },
    body: "x",
  });
  assert.equal(r.status, 503);
  assert.equal(r.text, "down");
  assert.equal(bad.count, 1);
});

Deno.test("failures eject a member for the cooldown, then probation restores or re-ejects it", async () => {
  const clock = new ManualClock();
  let fail = true;
  await using flaky = startMember(
    "flaky",
    () => fail ? new Response("no", { status: 502 }) : new Response("flaky"),
  );
  await using good = startMember("good");
  await using s = await startScalwsd(
    config({
      p: {
        members: members(flaky, good),
        retries: 0,
        passive_health: { failures: 2, cooldown: "10s" },
      },
    }),
    { clock },
  );
  const sock = s.adminSocket;
  const state = async () => {
    const p = await (await adminFetch(sock, "/v1/upstreams/p")).json();
    return p.members[0];
  };
  // Round robin alternates: flaky, good, flaky (2nd failure: ejected), then only good.
  const seen: string[] = [];
  for (let i = 0; i < 6; i++) {
    seen.push(String((await get(s.url + "/", { host: "a.test" })).status));
  }
  assert.deepEqual(seen, ["502", "200", "502", "200", "200", "200"]);
  let m = await state();
  assert.equal(m.state, "ejected");
  assert.equal(m.ejected_until, new Date(clock.now() + 10_000).toISOString());
  assert.match(
    await metrics(sock),
    new RegExp(`scalws_upstream_member_ejected\\{pool="p",member="${flaky.address}"\\} 1`),
  );

  // Cooldown over: probation. One failure ejects again at once.
  clock.advance(10_001);
  assert.equal((await state()).state, "probation");
  const statuses: number[] = [];
  while (statuses.length < 4 && !statuses.includes(502)) {
    statuses.push((await get(s.url + "/", { host: "a.test" })).status);
  }
  assert.equal(statuses.filter((x) => x === 502).length, 1);
  assert.equal((await state()).state, "ejected");
  for (let i = 0; i < 3; i++) {
    assert.equal((await get(s.url + "/", { host: "a.test" })).text, "good");
  }

  // Next cooldown: one success restores it fully.
  clock.advance(10_001);
  fail = false;
  const bodies: string[] = [];
  while (bodies.length < 4 && !bodies.includes("flaky")) {
    bodies.push((await get(s.url + "/", { host: "a.test" })).text);
  }
  assert.ok(bodies.includes("flaky"));
  m = await state();
  assert.equal(m.state, "healthy");
  assert.equal(m.failures, 0);
  assert.match(
    await metrics(sock),
    new RegExp(`scalws_upstream_member_ejected\\{pool="p",member="${flaky.address}"\\} 0`),
  );
});

Deno.test("connect failures are retried for any method; refused member is ejected", async () => {
  const dead = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const deadAddr = `127.0.0.1:${(dead.addr as Deno.NetAddr).port}`;
  dead.close();
  await using good = startMember(
    "good",
    async (req) => new Response(`good ${req.method} ${await req.text()}`),
  );
  await using s = await startScalwsd(config({
    p: {
      members: members(deadAddr, good),
      retries: 1,
      passive_health: { failures: 1, cooldown: "1h" },
    },
  }));
  const r = await request(s.url + "/", {
    method: "POST",
    headers: { host: "a.test" },
    body: "hello",
  });
  assert.equal(r.status, 200);
  assert.equal(r.text, "good POST hello");
  assert.equal(good.count, 1);
});

Deno.test("a member that resets after the request was written: GET retried, POST gets 502 and is sent once", async () => {
  let received = 0;
  await using resetter = rawServer(async (conn) => {
    await readHead(conn);
    received++;
    conn.close();
  });
  await using good = startMember("good");
  await using s = await startScalwsd(config({
    p: { members: members(resetter, good), retries: 1, passive_health: { failures: 0 } },
  }));
  for (let i = 0; i < 2; i++) {
    assert.equal((await get(s.url + "/", { host: "a.test" })).text, "good");
  }
  received = 0;
  const before = good.count;
  const statuses: number[] = [];
  for (let i = 0; i < 2; i++) {
    const r = await request(s.url + "/", {
      method: "POST",
      headers: { host: "a.test" },
      body: "x",
    });
    statuses.push(r.status);
  }
  assert.deepEqual(statuses.sort(), [200, 502]);
  assert.equal(received, 1);
  assert.equal(good.count, before + 1);
});

Deno.test("a member that never answers gets 504 after response_timeout", async () => {
  await using silent = rawServer(async (conn) => {
    await readHead(conn);
    await sleep(600);
  });
  await using s = await startScalwsd(config(
    { p: { members: members(silent) } },
    proxy("p", { response_timeout: "200ms" }),
  ));
  const t0 = performance.now();
  const r = await get(s.url + "/", { host: "a.test" });
  assert.equal(r.status, 504);
  assert.ok(performance.now() - t0 < 550);
});

Deno.test("backends split 3:1 by smooth weighted round robin, status entries answer themselves", async () => {
  await using a = startMember("a");
  await using b = startMember("b");
  await using s = await startScalwsd(config(
    {
      pa: { members: members(a) },
      pb: { members: members(b) },
      empty: { members_from: "api" },
    },
    {
      type: "proxy",
      backends: [
        { pool: "pa", weight: 2 },
        { pool: "pb", weight: 1 },
        { status: 503, weight: 1 },
        { pool: "empty", weight: 5 },
      ],
    },
  ));
  const seen: string[] = [];
  for (let i = 0; i < 8; i++) {
    const r = await get(s.url + "/", { host: "a.test" });
    seen.push(r.status === 503 ? "503" : r.text);
  }
  assert.equal(seen.filter((x) => x === "a").length, 4);
  assert.equal(seen.filter((x) => x === "b").length, 2);
  assert.equal(seen.filter((x) => x === "503").length, 2);
});

Deno.test("least_conn sends new requests to the member with fewest in flight per weight", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  await using slow = startMember("slow", async () => {
    await gate;
    return new Response("slow");
  });
  await using fast = startMember("fast");
  await using s = await startScalwsd(config({
    p: { members: members(slow, fast), balance: "least_conn" },
  }));
  try {
    // The first request goes to slow (tie, round robin) and stays in flight.
    const pending = get(s.url + "/", { host: "a.test" });
    await waitUntil(() => slow.count > 0, { what: "the first request to reach slow" });
    for (let i = 0; i < 5; i++) {
      assert.equal((await get(s.url + "/", { host: "a.test" })).text, "fast");
    }
    const view = await (await adminFetch(s.adminSocket, "/v1/upstreams/p")).json();
    assert.equal(view.members[0].in_flight, 1);
    release();
    assert.equal((await pending).text, "slow");
    const after = await (await adminFetch(s.adminSocket, "/v1/upstreams/p")).json();
    assert.equal(after.members[0].in_flight, 0);
  } finally {
    release();
  }
});

Deno.test("hash by header and by client_ip keep a key on one member; no key goes round robin", async () => {
  await using ms = startMembers(["a", "b", "c"]);
  await using s = await startScalwsd(scalwsYaml({
    upstreams: {
      byheader: {
        members: members(...ms),
        balance: "hash",
        hash: { by: "header", name: "X-User" },
      },
      byip: { members: members(...ms), balance: "hash", hash: { by: "client_ip" } },
    },
    apps: [app(proxy("byheader"), { routes: [{ path: "/ip", runtime: proxy("byip") }] })],
  }));
  const owners = new Map<string, string>();
  for (let u = 0; u < 20; u++) {
    const first = (await get(s.url + "/", { host: "a.test", "x-user": `user-${u}` })).text;
    owners.set(`user-${u}`, first);
    for (let i = 0; i < 2; i++) {
      assert.equal(
        (await get(s.url + "/", { host: "a.test", "x-user": `user-${u}` })).text,
        first,
      );
    }
  }
  assert.ok(new Set(owners.values()).size > 1, "keys spread over members");
  const noKey = new Set<string>();
  for (let i = 0; i < 3; i++) noKey.add((await get(s.url + "/", { host: "a.test" })).text);
  assert.equal(noKey.size, 3);
  const ip = (await get(s.url + "/ip", { host: "a.test" })).text;
  for (let i = 0; i < 4; i++) {
    assert.equal((await get(s.url + "/ip", { host: "a.test" })).text, ip);
  }
});
