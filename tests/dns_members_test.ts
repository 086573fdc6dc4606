/**
 * `members_from: dns`: a pool follows what a name server (a fake one on loopback, whose answers
 * change during the test) says about its name; failures keep the last good list and are
 * counted; NXDOMAIN empties the pool only after `grace`.
 */
import assert from "node:assert/strict";
import { startFakeDns } from "../src/discovery/_dns_test_server.ts";
import { adminFetch, get, proxy, scalwsYaml, startScalwsd, waitUntil } from "./_support/mod.ts";

/** A member on `hostname:port` answering its name. */
function serveOn(hostname: string, port: number, name: string) {
  const server = Deno.serve({ hostname, port, onListen() {} }, () => new Response(name));
  return {
    port: server.addr.port,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

function metric(
  s: { server: { metrics: { registry: { render(): string } } } },
  line: string,
) {
  const m = s.server.metrics.registry.render().split("\n").find((l) => l.startsWith(line + " "));
  return m === undefined ? 0 : Number(m.split(" ")[1]);
}

Deno.test("a dns pool follows the answers of its name server; failures keep the last list", async () => {
  await using dns = startFakeDns();
  await using a = serveOn("127.0.0.2", 0, "a");
  await using _b = serveOn("127.0.0.3", a.port, "b");
  const A = (...ips: string[]) => ({
    records: ips.map((address) => ({ name: "api.test", type: 1 as const, ttl: 0, address })),
  });
  dns.set("api.test", "A", A("127.0.0.2"));
  await using s = await startScalwsd(scalwsYaml({
    server: { resolver: `127.0.0.1:${dns.port}` },
    upstreams: {
      dyn: {
        members_from: "dns",
        dns: {
          name: "API.test.",
          type: "A",
          port: a.port,
          min_refresh: "20ms",
          max_refresh: "100ms",
          grace: "500ms",
        },
      },
    },
    apps: [{ name: "a", domains: ["a.test"], runtime: proxy("dyn") }],
  }));
  const hit = async () => (await get(s.url + "/", { host: "a.test" })).text;
  // The first answer is in before the server is ready.
  assert.equal(await hit(), "a");

  dns.set("api.test", "A", A("127.0.0.3", "127.0.0.2"));
  const seen = new Set<string>();
  await waitUntil(async () => (seen.add(await hit()), seen.size === 2), {
    what: "both members",
    timeoutMs: 10_000,
    intervalMs: 20,
  });
  const view = await (await adminFetch(s.adminSocket, "/v1/upstreams/dyn")).json();
  assert.deepEqual(view.members.map((m: { address: string }) => m.address), [
    `127.0.0.2:${a.port}`,
    `127.0.0.3:${a.port}`,
  ]);
  assert.ok(metric(s, 'scalws_upstream_discovery_updates_total{pool="dyn"}') >= 2);

  // SERVFAIL, then an empty answer: errors, counted, and the last good list stays.
  dns.set("api.test", "A", { rcode: 2 });
  await waitUntil(
    () => (metric(s, 'scalws_upstream_discovery_errors_total{pool="dyn"}')) >= 2,
    {
      what: "SERVFAIL counted",
      timeoutMs: 10_000,
    },
  );
  dns.set("api.test", "A", { records: [] });
  const errors = metric(s, 'scalws_upstream_discovery_errors_total{pool="dyn"}');
  await waitUntil(
    () => (metric(s, 'scalws_upstream_discovery_errors_total{pool="dyn"}')) > errors + 1,
    {
      what: "empty answers counted",
      timeoutMs: 10_000,
    },
  );
  seen.clear();
  for (let i = 0; i < 4; i++) seen.add(await hit());
  assert.deepEqual([...seen].sort(), ["a", "b"]);
  const failed = await (await adminFetch(s.adminSocket, "/v1/upstreams/dyn")).json();
  assert.equal(failed.source, "dns");
  assert.match(
    failed.last_error,
    /^(empty answer for api\.test|API\.test\.: name server answered SERVFAIL)$/,
  );
  assert.ok(Date.parse(failed.last_error_at) >= Date.parse(failed.updated_at));
  assert.ok(
    s.logs.some((l) => l.includes('"event":"dns_resolution_failed"') && l.includes("SERVFAIL")),
  );
  assert.ok(s.logs.some((l) => l.includes("empty answer for api.test")));

  // A PUT cannot replace what DNS sets.
  const put = await adminFetch(s.adminSocket, "/v1/upstreams/dyn", {
    method: "PUT",
    body: JSON.stringify({ members: [] }),
  });
  assert.equal(put.status, 409);
  assert.equal(
    (await put.json()).error,
    'pool "dyn" has members_from: dns; its members follow DNS',
  );

  // NXDOMAIN: the list stays during grace, then the pool is emptied.
  dns.set("api.test", "A", { rcode: 3 });
  const since = Date.now();
  await waitUntil(async () => (await get(s.url + "/", { host: "a.test" })).status === 503, {
    what: "the pool emptied after grace",
    timeoutMs: 10_000,
    intervalMs: 20,
  });
  assert.ok(Date.now() - since >= 450, `emptied after ${Date.now() - since} ms`);
  assert.ok(s.logs.some((l) => l.includes('"emptied":true')));

  // The name comes back: so do the members.
  dns.set("api.test", "A", A("127.0.0.3"));
  await waitUntil(async () => (await hit()) === "b", { what: "back", timeoutMs: 10_000 });
});

Deno.test("a dns pool of SRV records takes ports and scaled weights from the answer", async () => {
  await using dns = startFakeDns();
  await using a = serveOn("127.0.0.1", 0, "a");
  await using b = serveOn("127.0.0.1", 0, "b");
  const srv = (port: number, weight: number, target: string) => ({
    name: "_http._tcp.api.test",
    type: 33 as const,
    ttl: 30,
    priority: 1,
    weight,
    port,
    target,
  });
  dns.set("_http._tcp.api.test", "SRV", {
    records: [srv(a.port, 30, "a.node.test"), srv(b.port, 10, "b.node.test")],
    additional: [
      { name: "a.node.test", type: 1, ttl: 30, address: "127.0.0.1" },
      { name: "b.node.test", type: 1, ttl: 30, address: "127.0.0.1" },
    ],
  });
  await using s = await startScalwsd(scalwsYaml({
    server: { resolver: `127.0.0.1:${dns.port}` },
    upstreams: { dyn: { members_from: "dns", dns: { name: "_http._tcp.api.test", type: "SRV" } } },
    apps: [{ name: "a", domains: ["a.test"], runtime: proxy("dyn") }],
  }));
  const view = await (await adminFetch(s.adminSocket, "/v1/upstreams/dyn")).json();
  const weights = Object.fromEntries(
    view.members.map((m: { address: string; weight: number }) => [m.address, m.weight]),
  );
  assert.deepEqual(weights, { [`127.0.0.1:${a.port}`]: 1000, [`127.0.0.1:${b.port}`]: 333 });
  const counts: Record<string, number> = {};
  for (let i = 0; i < 8; i++) {
    const t = (await get(s.url + "/", { host: "a.test" })).text;
    counts[t] = (counts[t] ?? 0) + 1;
  }
  assert.deepEqual(counts, { a: 6, b: 2 });
});
