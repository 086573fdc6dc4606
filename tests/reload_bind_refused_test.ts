/**
 * A reload refused because a new listener cannot bind (its port is held by another process)
 * changes nothing: the generation, the routes, the pools and their settings, the metric series
 * and the listeners stay as they were (ADR-0049 "Reload", issue 4: "a refused reload changes
 * nothing and its half-built pools leave no metric series").
 */
import assert from "node:assert/strict";
import {
  adminFetch,
  app,
  get,
  HTTP_LISTENER,
  members,
  proxy,
  respond,
  scalwsYaml,
  startMember,
  startScalwsd,
} from "./_support/mod.ts";

Deno.test("a reload whose new listener cannot bind is refused and changes nothing", async () => {
  await using m = startMember("m");
  using busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  using spare = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const sparePort = (spare.addr as Deno.NetAddr).port;
  spare.close();
  const second = { name: "second", address: `127.0.0.1:${sparePort}` };
  const yaml = (o: { listeners: unknown[]; retries: number; body: string; extraPool: boolean }) =>
    scalwsYaml({
      server: { listeners: o.listeners },
      upstreams: {
        p: { members: members(m), retries: o.retries },
        ...(o.extraPool ? { q: { members: members(m) } } : {}),
      },
      apps: [app(proxy("p")), app(respond(o.body), { name: "b", domains: ["b.test"] })],
    });
  await using s = await startScalwsd(
    yaml({ listeners: [HTTP_LISTENER, second], retries: 1, body: "old", extraPool: false }),
  );
  const sock = s.adminSocket;
  const busyPort = (busy.addr as Deno.NetAddr).port;
  // The second listener is replaced by one on a port another socket holds.
  await s.write(yaml({
    listeners: [HTTP_LISTENER, { name: "third", address: `127.0.0.1:${busyPort}` }],
    retries: 2,
    body: "new",
    extraPool: true,
  }));
  const r = await adminFetch(sock, "/v1/reload", { method: "POST" });
  assert.equal(r.status, 400);
  assert.match(
    (await r.json()).error,
    /listener "third" on 127\.0\.0\.1:\d+: Address already in use/,
  );

  assert.deepEqual(await (await adminFetch(sock, "/readyz")).json(), {
    generation: 1,
    state: "ready",
  });
  assert.equal((await get(s.url + "/", { host: "b.test" })).text, "old");
  assert.equal((await get(`http://127.0.0.1:${sparePort}/`, { host: "b.test" })).text, "old");
  const pools = (await (await adminFetch(sock, "/v1/upstreams")).json()).upstreams;
  assert.deepEqual(pools.map((p: { name: string }) => p.name), ["p"]);
  assert.equal(pools[0].retries, 1);
  const metrics = await (await adminFetch(sock, "/metrics")).text();
  assert.doesNotMatch(metrics, /pool="q"/);

  // Once the port is free the same file loads. Another process of a busy machine may take the
  // freed port first: then the file, with another free port, is tried again (at most 3 times).
  busy.close();
  let port = busyPort;
  let ok = await adminFetch(sock, "/v1/reload", { method: "POST" });
  for (let i = 0; i < 3 && ok.status === 400; i++) {
    const why = (await ok.json()).error;
    assert.match(why, /Address already in use/);
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    port = (l.addr as Deno.NetAddr).port;
    l.close();
    await s.write(yaml({
      listeners: [HTTP_LISTENER, { name: "third", address: `127.0.0.1:${port}` }],
      retries: 2,
      body: "new",
      extraPool: true,
    }));
    ok = await adminFetch(sock, "/v1/reload", { method: "POST" });
  }
  assert.equal(ok.status, 200);
  assert.equal((await get(`http://127.0.0.1:${port}/`, { host: "b.test" })).text, "new");
});
