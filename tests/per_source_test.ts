import assert from "node:assert/strict";
import {
  app,
  disposableList,
  request,
  respond,
  scalwsYaml,
  sleep,
  startScalwsd,
} from "./_support/mod.ts";
import { RawConn } from "./_support/raw_conn.ts";
import { ManualClock } from "../src/base/clock.ts";

/** Applications a (a route /.git, `appA` its other keys) and b; `server` adds server keys. */
function config(server: Record<string, unknown>, appA: Record<string, unknown> = {}): string {
  return scalwsYaml({
    server: { admin: undefined, ...server },
    apps: [
      app(respond("a"), { routes: [{ path: "/.git", runtime: respond("routed") }], ...appA }),
      app(respond("b"), { name: "b", domains: ["b.test"] }),
    ],
  });
}

Deno.test("limit_req: a token bucket per client address, 429 with Retry-After", async () => {
  const clock = new ManualClock(0);
  await using s = await startScalwsd(
    config({ limit_req: { rate: "2r/s", burst: 1 }, trusted_proxies: ["127.0.0.1"] }),
    { clock },
  );
  const get = (host: string, xff?: string) =>
    request(s.url + "/", { headers: { host, ...(xff ? { "x-forwarded-for": xff } : {}) } });
  const first = [await get("a.test", "203.0.113.1"), await get("b.test", "203.0.113.1")];
  assert.deepEqual(first.map((r) => r.status), [200, 200], "burst 1: two at once, any app");
  const third = await get("a.test", "203.0.113.1");
  assert.deepEqual([third.status, third.text], [429, "Too Many Requests\n"]);
  assert.equal(third.headers.get("retry-after"), "1");
  assert.equal((await get("a.test", "203.0.113.2")).status, 200, "another client");
  assert.equal(
    (await get("a.test", "198.51.100.7, 203.0.113.1")).status,
    429,
    "the hop before the trusted proxy",
  );
  clock.advance(499);
  assert.equal((await get("a.test", "203.0.113.1")).status, 429);
  clock.advance(1);
  assert.equal((await get("a.test", "203.0.113.1")).status, 200);
});

Deno.test("limit_req: the peer is the client when it is not a trusted proxy; apps may have their own", async () => {
  const clock = new ManualClock(0);
  await using s = await startScalwsd(
    config({ limit_req: { rate: "1r/m" } }, { limit_req: { rate: "1r/s", burst: 2 } }),
    { clock },
  );
  const get = (host: string, xff: string) =>
    request(s.url + "/", { headers: { host, "x-forwarded-for": xff } });
  // X-Forwarded-For of an untrusted peer is ignored: both "clients" are 127.0.0.1.
  assert.equal((await get("b.test", "203.0.113.1")).status, 200);
  const again = await get("b.test", "203.0.113.2");
  assert.deepEqual([again.status, again.headers.get("retry-after")], [429, "60"]);
  // Application a has its own limit: three at once.
  const a = [];
  for (let i = 0; i < 4; i++) a.push((await get("a.test", "x")).status);
  assert.deepEqual(a, [200, 200, 200, 429]);
});

Deno.test("limit_req: X-Forwarded-For hops are addresses, ports dropped; the walk stops at anything else", async () => {
  const clock = new ManualClock(0);
  await using s = await startScalwsd(
    config({ limit_req: { rate: "1r/m" }, trusted_proxies: ["127.0.0.1"] }),
    { clock },
  );
  const status = async (xff: string) =>
    (await request(s.url + "/", { headers: { host: "a.test", "x-forwarded-for": xff } })).status;
  // As nginx's realip reads them: "IPv4:port" and "[IPv6]:port" are the address.
  assert.equal(await status("203.0.113.9"), 200);
  assert.equal(await status("203.0.113.9:4711"), 429);
  assert.equal(await status("[2001:db8::9]"), 200);
  assert.equal(await status("[2001:db8::9]:443"), 429);
  assert.equal(await status("2001:db8::9"), 429);
  // Not an address: the client is the last trusted hop (here the peer), not the text.
  assert.equal(await status("not-an-address"), 200);
  assert.equal(await status("another-one"), 429);
  assert.equal(await status("198.51.100.1, junk"), 429);
});

Deno.test("limit_req: a reload keeps the buckets of an unchanged limit and resets a changed one", async () => {
  const clock = new ManualClock(0);
  await using s = await startScalwsd(config({ limit_req: { rate: "1r/m" } }), { clock });
  const get = () => request(s.url + "/", { headers: { host: "a.test" } });
  assert.equal((await get()).status, 200);
  assert.equal((await get()).status, 429);
  // Something else changes: the bucket stays empty.
  await s.write(config({ limit_req: { rate: "1r/m" }, deny_paths: ["/private"] }));
  assert.equal((await s.server.reload()).ok, true);
  assert.equal((await get()).status, 429);
  // The limit itself changes: a new, full bucket.
  await s.write(config({ limit_req: { rate: "1r/m", burst: 1 } }));
  assert.equal((await s.server.reload()).ok, true);
  assert.deepEqual([(await get()).status, (await get()).status, (await get()).status], [
    200,
    200,
    429,
  ]);
});

Deno.test("limit_conn: connections over the limit get 429 and close; trusted proxies are exempt", async () => {
  await using s = await startScalwsd(config({ limit_conn: 2 }));
  const port = Number(new URL(s.url).port);
  await using conns = disposableList<RawConn>();
  for (let i = 0; i < 2; i++) {
    const c = await RawConn.open(port);
    conns.push(c);
    await c.write("GET / HTTP/1.1\r\nhost: a.test\r\n\r\n");
    assert.equal((await c.response())?.status, 200);
  }
  const third = await RawConn.open(port);
  conns.push(third);
  await third.write("GET / HTTP/1.1\r\nhost: a.test\r\n\r\n");
  const r = await third.response();
  assert.equal(r?.status, 429);
  assert.equal(r?.body, "Too Many Requests: too many connections from this address\n");
  assert.match(r!.head, /\r\nretry-after: 1\r\n/);
  assert.ok((await third.closedWithin(2000)) >= 0, "closed");
  // A slot frees when a connection closes.
  await conns[0].close();
  await sleep(50);
  const fourth = await RawConn.open(port);
  conns.push(fourth);
  await fourth.write("GET / HTTP/1.1\r\nhost: a.test\r\n\r\n");
  assert.equal((await fourth.response())?.status, 200);

  await s.write(config({ limit_conn: 2, trusted_proxies: ["127.0.0.1"] }));
  assert.equal((await s.server.reload()).ok, true);
  const proxy = await RawConn.open(port);
  conns.push(proxy);
  await proxy.write("GET / HTTP/1.1\r\nhost: a.test\r\n\r\n");
  assert.equal((await proxy.response())?.status, 200);
});

Deno.test("deny_paths: 404 before routing, segment-aligned, server-wide and per application", async () => {
  await using s = await startScalwsd(
    config({ deny_paths: ["/.git", "/.env"] }, { deny_paths: ["/admin"] }),
  );
  const get = (host: string, path: string) => request(s.url + path, { headers: { host } });
  const cases: [string, string, number, string][] = [
    ["a.test", "/.git", 404, "Not Found\n"],
    ["a.test", "/.git/config", 404, "Not Found\n"],
    ["a.test", "/x/../.git/HEAD", 404, "Not Found\n"],
    ["a.test", "/%2e%2e/.git/HEAD", 404, "Not Found\n"],
    ["a.test", "//.env", 404, "Not Found\n"],
    // Escaped unreserved characters mean the same path (RFC 3986 6.2.2.2), as members read it.
    ["a.test", "/%2egit", 404, "Not Found\n"],
    ["a.test", "/.%67it/config", 404, "Not Found\n"],
    ["a.test", "/%61dmin/users", 404, "Not Found\n"],
    ["a.test", "/.gitignore", 200, "a"],
    ["a.test", "/admin/users", 404, "Not Found\n"],
    ["a.test", "/administrator", 200, "a"],
    ["b.test", "/admin", 200, "b"],
    ["b.test", "/.env", 404, "Not Found\n"],
  ];
  for (const [host, path, status, body] of cases) {
    const r = await get(host, path);
    assert.deepEqual([r.status, r.text], [status, body], `${host}${path}`);
  }
});
