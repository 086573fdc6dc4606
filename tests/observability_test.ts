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
  tempDir,
  waitUntil,
} from "./_support/mod.ts";

async function hasPromtool(): Promise<boolean> {
  try {
    await new Deno.Command("promtool", { args: ["--version"], stdout: "null", stderr: "null" })
      .output();
    return true;
  } catch {
    return false;
  }
}

/** Tenant acme with application www on a.test (`extra` adds keys to www). */
function acme(runtime: unknown, extra: Record<string, unknown> = {}) {
  return [{ name: "acme", applications: [app(runtime, { name: "www", ...extra })] }];
}

Deno.test({
  name: "the metrics exposition passes promtool check metrics and carries the five pool families",
  ignore: !(await hasPromtool()),
  async fn() {
    await using a = startMember("a");
    await using bad = startMember("bad", () => new Response("x", { status: 503 }));
    await using s = await startScalwsd(scalwsYaml({
      server: { metrics: { address: "127.0.0.1:0" } },
      upstreams: {
        api: { members: members(a, bad), passive_health: { failures: 1, cooldown: "1h" } },
      },
      tenants: acme(proxy("api")),
    }));
    for (let i = 0; i < 4; i++) {
      assert.equal((await get(s.url + "/", { host: "a.test" })).status, 200);
    }
    const port = s.admin.bound.get("metrics")!.port;
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    assert.match(res.headers.get("content-type")!, /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const child = new Deno.Command("promtool", {
      args: ["check", "metrics"],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    })
      .spawn();
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(text));
    await w.close();
    const out = await child.output();
    const problems = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    // promtool exits 0 when the text parses; lint remarks (like missing _total) are printed.
    assert.equal(out.code, 0, problems);
    assert.doesNotMatch(problems, /error/i);
    for (
      const re of [
        new RegExp(
          `scalws_upstream_requests_total\\{pool="api",member="${a.address}",class="2xx"\\} 4`,
        ),
        new RegExp(
          `scalws_upstream_requests_total\\{pool="api",member="${bad.address}",class="5xx"\\} 1`,
        ),
        /scalws_upstream_request_duration_seconds_count\{pool="api"\} 4/,
        new RegExp(`scalws_upstream_member_ejected\\{pool="api",member="${bad.address}"\\} 1`),
        new RegExp(`scalws_upstream_member_ejected\\{pool="api",member="${a.address}"\\} 0`),
        /scalws_upstream_pool_retries_total\{pool="api"\} 1/,
        /scalws_upstream_members\{pool="api"\} 2/,
        /scalws_http_requests_total\{tenant="acme",app="www",class="2xx"\} 4/,
        /# TYPE scalws_upstream_retries_total counter/,
      ]
    ) assert.match(text, re);
  },
});

Deno.test("access log lines are JSON with the pool fields and no query string", async () => {
  await using a = startMember("a");
  await using dir = await tempDir();
  const logFile = `${dir.path}/access.log`;
  {
    // Closing scalwsd flushes the access log.
    await using s = await startScalwsd(
      scalwsYaml({
        upstreams: { api: { members: members(a) } },
        tenants: acme(proxy("api"), {
          routes: [
            { path: "/fixed", runtime: { type: "respond", status: 204 } },
            { path: "/direct", runtime: { type: "proxy", upstream: `http://${a.address}` } },
          ],
        }),
      }),
      { accessLog: logFile },
    );
    await get(s.url + "/x?secret=1", { host: "a.test" });
    await get(s.url + "/fixed?q=2", { host: "a.test" });
    await get(s.url + "/direct", { host: "a.test" });
  }
  const lines = (await Deno.readTextFile(logFile)).trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines.length, 3);
  const [p, f, d] = lines;
  assert.equal(p.tenant, "acme");
  assert.equal(p.app, "www");
  assert.equal(p.method, "GET");
  assert.equal(p.path, "/x");
  assert.equal(p.status, 200);
  assert.equal(p.bytes, 1);
  assert.equal(p.upstream_member, a.address);
  assert.equal(p.upstream_attempts, 1);
  assert.equal(typeof p.duration, "number");
  assert.ok(!Number.isNaN(Date.parse(p.time)));
  assert.equal(f.path, "/fixed");
  assert.equal(f.status, 204);
  assert.equal(f.upstream_member, "-");
  assert.equal(f.upstream_attempts, 0);
  // The single-address form does not go through a pool: `-` and 0, as the guide says.
  assert.equal(d.status, 200);
  assert.equal(d.upstream_member, "-");
  assert.equal(d.upstream_attempts, 0);
  // In the clear: no TLS fields.
  assert.deepEqual([p.tls, p.tls_cipher, p.tls_resumed, p.sni], ["-", "-", false, "-"]);
  // No cache on these routes.
  assert.equal(p.cache, "-");
  assert.equal(f.cache, "-");
});

Deno.test("a stale kept-alive connection is resent once and counted in scalws_upstream_retries_total", async () => {
  // A member that advertises keep-alive but closes a connection when a second request arrives
  // on it: its idle timeout raced with the request, so nothing could notice it earlier.
  await using member = rawServer(async (conn) => {
    const buf = new Uint8Array(4096);
    await conn.read(buf);
    await conn.write(new TextEncoder().encode("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"));
    await conn.read(buf);
    conn.close();
  });
  await using s = await startScalwsd(scalwsYaml({
    tenants: acme({ type: "proxy", upstream: `http://${member.address}` }),
  }));
  assert.equal((await get(s.url + "/", { host: "a.test" })).text, "ok");
  // Written on a connection idle for at least 1 s: a bodyless GET may be sent again.
  await sleep(1100);
  assert.equal((await get(s.url + "/", { host: "a.test" })).text, "ok");
  const m = await (await adminFetch(s.adminSocket, "/metrics")).text();
  assert.match(m, /scalws_upstream_retries_total\{tenant="acme",app="www",protocol="http1"\} 1/);
});

Deno.test("a failed attempt is logged as proxy_failed with its phase, member and what followed", async () => {
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const refused = `127.0.0.1:${(closed.addr as Deno.NetAddr).port}`;
  closed.close();
  await using bad = rawServer(async (conn) => {
    await conn.read(new Uint8Array(4096));
    const path = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!";
    await conn.write(new TextEncoder().encode(path));
    conn.close();
  });
  await using cut = rawServer(async (conn) => {
    await conn.read(new Uint8Array(4096));
    await conn.write(
      new TextEncoder().encode("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort"),
    );
    conn.close();
  });
  await using s = await startScalwsd(scalwsYaml({
    upstreams: { p: { members: members(refused, bad), retries: 1, balance: "failover" } },
    tenants: acme(proxy("p"), {
      routes: [
        { path: "/one", runtime: { type: "proxy", upstream: `http://${bad.address}` } },
        { path: "/cut", runtime: { type: "proxy", upstream: `http://${cut.address}` } },
      ],
    }),
  }));
  // The pool: refused on the first member, retried on the second, which answers malformed.
  assert.equal((await get(s.url + "/", { host: "a.test" })).status, 502);
  assert.equal((await get(s.url + "/one", { host: "a.test" })).status, 502);
  await get(s.url + "/cut", { host: "a.test" }).catch(() => {});
  const failed = () =>
    s.logs.map((l) => JSON.parse(l)).filter((l) => l.event === "proxy_failed").map((l) => {
      const { time: _t, error, ...rest } = l;
      assert.equal(typeof error, "string");
      return rest;
    });
  await waitUntil(() => failed().length === 4, { what: "four proxy_failed lines" });
  const base = { level: "warn", event: "proxy_failed", tenant: "acme", app: "www" };
  assert.deepEqual(failed(), [
    { ...base, pool: "p", member: refused, phase: "connect", kind: "refused", retry: true },
    { ...base, pool: "p", member: bad.address, phase: "head", kind: "malformed", retry: false },
    { ...base, pool: "-", member: bad.address, phase: "head", kind: "malformed", retry: false },
    { ...base, pool: "-", member: cut.address, phase: "body", kind: "malformed", retry: false },
  ]);
});
