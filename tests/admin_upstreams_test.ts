import assert from "node:assert/strict";
import {
  adminFetch,
  app,
  get,
  members,
  proxy,
  rawServer,
  scalwsYaml,
  sleep,
  startMember,
  startScalwsd,
} from "./_support/mod.ts";

/** Pool dyn (members from the API, `dyn` its other settings) behind application a; pool fixed. */
function config(dyn: Record<string, unknown> = { balance: "least_conn" }): string {
  return scalwsYaml({
    upstreams: {
      dyn: { members_from: "api", ...dyn },
      fixed: { members: members("127.0.0.1:9") },
    },
    apps: [app(proxy("dyn"))],
  });
}

const CONFIG = config();

function put(sock: string, name: string, body: string): Promise<Response> {
  return adminFetch(sock, `/v1/upstreams/${name}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body,
  });
}

Deno.test("PUT replaces the members of an api pool and answers the pool as GET shows it", async () => {
  await using a = startMember("a");
  await using b = startMember("b");
  await using s = await startScalwsd(CONFIG);
  const sock = s.adminSocket;
  assert.equal((await get(s.url + "/", { host: "a.test" })).status, 503);
  const r = await put(
    sock,
    "dyn",
    JSON.stringify({ members: [{ address: a.address, weight: 2 }, { address: b.address }] }),
  );
  assert.equal(r.status, 200);
  const body = await r.json();
  assert.equal(body.name, "dyn");
  assert.equal(body.members_from, "api");
  assert.deepEqual(
    body.members.map((m: { address: string; weight: number }) => [m.address, m.weight]),
    [
      [a.address, 2],
      [b.address, 1],
    ],
  );
  assert.deepEqual(body, await (await adminFetch(sock, "/v1/upstreams/dyn")).json());
  const seen = new Set<string>();
  for (let i = 0; i < 4; i++) seen.add((await get(s.url + "/", { host: "a.test" })).text);
  assert.deepEqual([...seen].sort(), ["a", "b"]);
  const all = await (await adminFetch(sock, "/v1/upstreams")).json();
  assert.deepEqual(all.upstreams.map((p: { name: string }) => p.name), ["dyn", "fixed"]);
});

Deno.test("PUT refusals: 400 with the entry named, 404, 409, 413; nothing changes", async () => {
  await using a = startMember("a");
  await using s = await startScalwsd(CONFIG);
  const sock = s.adminSocket;
  assert.equal(
    (await put(sock, "dyn", JSON.stringify({ members: [{ address: a.address }] }))).status,
    200,
  );
  const before = await (await adminFetch(sock, "/v1/upstreams/dyn")).json();
  const cases: [string, string, number, string][] = [
    [
      "dyn",
      JSON.stringify({
        members: [{ address: a.address }, { address: "127.0.0.1:2", weight: 0 }],
      }),
      400,
      "members[1].weight: must be between 1 and 1000",
    ],
    [
      "dyn",
      JSON.stringify({
        members: [{ address: a.address }, { address: "127.0.0.1:2", weight: 1001 }],
      }),
      400,
      "members[1].weight: must be between 1 and 1000",
    ],
    ["dyn", "{not json", 400, ""],
    ["dyn", JSON.stringify({ nodes: [] }), 400, ""],
    ["dyn", JSON.stringify([{ address: a.address }]), 400, ""],
    [
      "dyn",
      JSON.stringify({ members: [{ address: "http://127.0.0.1:2" }] }),
      400,
      "members[0].address",
    ],
    ["dyn", JSON.stringify({ members: [{ address: "127.0.0.1" }] }), 400, "members[0].address"],
    [
      "dyn",
      JSON.stringify({ members: [{ address: a.address }, { address: a.address }] }),
      400,
      "members[1].address",
    ],
    [
      "dyn",
      JSON.stringify({
        members: Array.from(
          { length: 10_001 },
          (_, i) => ({ address: `10.0.${i >> 8}.${i & 255}:80` }),
        ),
      }),
      400,
      "members",
    ],
    ["nope", JSON.stringify({ members: [] }), 404, ""],
    ["fixed", JSON.stringify({ members: [] }), 409, ""],
    ["dyn", JSON.stringify({ members: [], pad: "x".repeat(2 * 1024 * 1024) }), 413, ""],
  ];
  for (const [pool, body, status, message] of cases) {
    const r = await put(sock, pool, body);
    assert.equal(r.status, status, `${pool} ${body.slice(0, 60)}`);
    const json = await r.json();
    assert.equal(typeof json.error, "string");
    if (message.includes(":")) assert.equal(json.error, message);
    else if (message) assert.ok(json.error.startsWith(message), json.error);
  }
  assert.deepEqual(await (await adminFetch(sock, "/v1/upstreams/dyn")).json(), before);
  assert.equal((await get(s.url + "/", { host: "a.test" })).text, "a");
});

Deno.test("an empty member list is accepted and answers 503 with Retry-After until members return", async () => {
  await using a = startMember("a");
  await using s = await startScalwsd(CONFIG);
  const sock = s.adminSocket;
  assert.equal((await put(sock, "dyn", JSON.stringify({ members: [] }))).status, 200);
  const r = await get(s.url + "/", { host: "a.test" });
  assert.equal(r.status, 503);
  assert.equal(r.headers.get("retry-after"), "1");
  assert.equal(
    (await put(sock, "dyn", JSON.stringify({ members: [{ address: a.address }] }))).status,
    200,
  );
  assert.equal((await get(s.url + "/", { host: "a.test" })).text, "a");
});

Deno.test("members that keep their address keep health; removed members lose their series", async () => {
  await using a = startMember("a", () => new Response("no", { status: 502 }));
  await using b = startMember("b");
  await using s = await startScalwsd(
    config({ balance: "round_robin", retries: 0 }),
  );
  const sock = s.adminSocket;
  await put(
    sock,
    "dyn",
    JSON.stringify({ members: [{ address: a.address }, { address: b.address }] }),
  );
  for (let i = 0; i < 4; i++) await get(s.url + "/", { host: "a.test" });
  const failures = (await (await adminFetch(sock, "/v1/upstreams/dyn")).json()).members[0].failures;
  assert.equal(failures, 2);
  const r = await put(
    sock,
    "dyn",
    JSON.stringify({ members: [{ address: a.address, weight: 3 }] }),
  );
  const view = await r.json();
  assert.equal(view.members[0].failures, 2);
  assert.equal(view.members[0].weight, 3);
  const m = await (await adminFetch(sock, "/metrics")).text();
  assert.ok(!m.includes(b.address), "series of the removed member are gone");
  assert.match(
    m,
    new RegExp(
      `scalws_upstream_requests_total\\{pool="dyn",member="${a.address}",class="5xx"\\} 2`,
    ),
  );
  assert.match(m, /scalws_upstream_members\{pool="dyn"\} 1/);
});

Deno.test("a reload keeps api members, keeps unchanged pools' health and drops removed pools' series", async () => {
  await using a = startMember("a", () => new Response("no", { status: 503 }));
  await using b = startMember("b");
  /** `files` adds settings to pool files, `dyn` to pool dyn; `more` adds pools. */
  const yaml = (
    { files = {}, dyn = {}, more = {} }: Record<string, Record<string, unknown>> = {},
  ) =>
    scalwsYaml({
      upstreams: {
        dyn: { members_from: "api", retries: 0, ...dyn },
        files: { members: members(a, b), retries: 0, ...files },
        ...more,
      },
      apps: [app(proxy("files"), { routes: [{ path: "/dyn", runtime: proxy("dyn") }] })],
    });
  await using s = await startScalwsd(yaml({ more: { gone: { members: members("127.0.0.1:9") } } }));
  const sock = s.adminSocket;
  const pool = async (name: string) => (await adminFetch(sock, `/v1/upstreams/${name}`)).json();
  await put(sock, "dyn", JSON.stringify({ members: [{ address: b.address }] }));
  for (let i = 0; i < 2; i++) await get(s.url + "/", { host: "a.test" });
  assert.equal((await pool("files")).members[0].failures, 1);
  assert.match(
    await (await adminFetch(sock, "/metrics")).text(),
    /scalws_upstream_members\{pool="gone"\} 1/,
  );

  // Unchanged settings: kept with health; api members kept; removed pool gone with its series.
  await s.write(yaml());
  assert.equal((await adminFetch(sock, "/v1/reload", { method: "POST" })).status, 200);
  assert.equal((await pool("files")).members[0].failures, 1);
  assert.deepEqual((await pool("dyn")).members.map((m: { address: string }) => m.address), [
    b.address,
  ]);
  assert.equal((await adminFetch(sock, "/v1/upstreams/gone")).status, 404);
  assert.ok(!(await (await adminFetch(sock, "/metrics")).text()).includes('pool="gone"'));

  // Changed settings: rebuilt with fresh health; the api pool still keeps its members.
  await s.write(yaml({ files: { keepalive: 8 }, dyn: { balance: "least_conn" } }));
  assert.equal((await adminFetch(sock, "/v1/reload", { method: "POST" })).status, 200);
  assert.equal((await pool("files")).members[0].failures, 0);
  assert.deepEqual((await pool("dyn")).members.map((m: { address: string }) => m.address), [
    b.address,
  ]);
  assert.equal((await pool("dyn")).balance, "least_conn");
  assert.equal((await get(s.url + "/dyn", { host: "a.test" })).text, "b");

  // A refused reload changes nothing and leaves no series of the pools it built.
  await s.write(
    yaml({ more: { half: { members: members("127.0.0.1:9") }, broken: { retries: 9 } } }),
  );
  assert.equal((await adminFetch(sock, "/v1/reload", { method: "POST" })).status, 400);
  const m = await (await adminFetch(sock, "/metrics")).text();
  assert.ok(!m.includes('pool="half"'));
  assert.equal((await adminFetch(sock, "/readyz")).status, 200);
  assert.equal((await (await adminFetch(sock, "/readyz")).json()).generation, 3);
});

Deno.test("a file pool switching to api keeps the members it had", async () => {
  await using a = startMember("a");
  const yaml = (mode: string) =>
    scalwsYaml({
      upstreams: { p: { members_from: mode, members: mode === "file" ? members(a) : [] } },
      apps: [app(proxy("p"))],
    });
  await using s = await startScalwsd(yaml("file"));
  const sock = s.adminSocket;
  await s.write(yaml("api"));
  assert.equal((await adminFetch(sock, "/v1/reload", { method: "POST" })).status, 200);
  const p = await (await adminFetch(sock, "/v1/upstreams/p")).json();
  assert.equal(p.members_from, "api");
  assert.deepEqual(p.members.map((m: { address: string }) => m.address), [a.address]);
  assert.equal((await get(s.url + "/", { host: "a.test" })).text, "a");
});

Deno.test("a reload whose settings do not fit an api pool's kept members is refused, naming the pool", async () => {
  await using s = await startScalwsd(config());
  const sock = s.adminSocket;
  const list = '{"members": [{"address": "unix:/run/dyn.sock"}]}';
  assert.equal((await put(sock, "dyn", list)).status, 200);
  // scheme: https cannot reach the kept unix: member.
  await s.write(config({ balance: "least_conn", scheme: "https" }));
  const r = await adminFetch(sock, "/v1/reload", { method: "POST" });
  assert.equal(r.status, 400);
  const body = await r.json();
  assert.deepEqual(body.errors, [
    `${s.file}:9:5: upstreams.dyn: the members it keeps from the admin API do not fit its new ` +
    `settings: members[0].address: a unix: member is only allowed with scheme: http; ` +
    `PUT a list that fits, then reload`,
  ]);
  const p = await (await adminFetch(sock, "/v1/upstreams/dyn")).json();
  assert.equal(p.scheme, "http");
  assert.deepEqual(p.members.map((m: { address: string }) => m.address), ["unix:/run/dyn.sock"]);
});

Deno.test("every admin change is written to an audit line", async () => {
  await using s = await startScalwsd(CONFIG);
  const sock = s.adminSocket;
  await put(sock, "dyn", JSON.stringify({ members: [] }));
  await put(sock, "fixed", JSON.stringify({ members: [] }));
  await adminFetch(sock, "/v1/reload", { method: "POST" });
  const audits = s.logs.map((l) => JSON.parse(l)).filter((l) => l.event === "admin_audit");
  assert.deepEqual(
    audits.map((a) => [a.who, a.action, a.target, a.result]),
    [
      ["socket", "set_members", "dyn", "ok"],
      ["socket", "set_members", "fixed", "refused 409"],
      ["socket", "reload", s.file, "ok"],
    ],
  );
});

Deno.test("a removed member's idle connections close while its in-flight request finishes", async () => {
  let closed = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  await using member = rawServer(async (conn) => {
    const buf = new Uint8Array(8192);
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) {
        closed++;
        return;
      }
      const head = new TextDecoder().decode(buf.subarray(0, n));
      if (head.startsWith("GET /slow")) await gate;
      await conn.write(new TextEncoder().encode("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"));
    }
  });
  await using other = startMember("other");
  await using s = await startScalwsd(CONFIG);
  const sock = s.adminSocket;
  try {
    await put(sock, "dyn", JSON.stringify({ members: [{ address: member.address }] }));
    // Two requests at once leave two kept-alive connections; one more stays in flight.
    await Promise.all([
      get(s.url + "/a", { host: "a.test" }),
      get(s.url + "/b", { host: "a.test" }),
    ]);
    const slow = get(s.url + "/slow", { host: "a.test" });
    await sleep(50);
    await put(sock, "dyn", JSON.stringify({ members: [{ address: other.address }] }));
    for (let i = 0; i < 50 && closed < 1; i++) await sleep(10);
    assert.equal(closed, 1, "the idle connection closed");
    assert.equal((await get(s.url + "/", { host: "a.test" })).text, "other");
    release();
    const r = await slow;
    assert.equal(r.status, 200);
    assert.equal(r.text, "ok");
    for (let i = 0; i < 50 && closed < 2; i++) await sleep(10);
    assert.equal(closed, 2, "the in-flight connection closes when its request is done");
  } finally {
    release();
  }
});
