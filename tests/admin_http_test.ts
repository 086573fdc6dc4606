/**
 * `server.admin.http` (the console listener): read-only unless `writes: true`; writes through it
 * are audited as `"who": "http"` with the peer address.
 */
import assert from "node:assert/strict";
import { ADMIN_SOCKET, app, respond, scalwsYaml, startScalwsd } from "./_support/mod.ts";

const CONFIG = (writes?: boolean) =>
  scalwsYaml({
    server: {
      admin: {
        ...ADMIN_SOCKET,
        http: { address: "127.0.0.1:0", ...(writes === undefined ? {} : { writes }) },
      },
    },
    upstreams: { dyn: { members_from: "api" } },
    apps: [app(respond("ok"))],
  });

Deno.test("admin http: read-only by default; other methods get 403 naming the admin socket", async () => {
  await using s = await startScalwsd(CONFIG());
  const base = `http://127.0.0.1:${s.admin.bound.get("http")!.port}`;
  const up = await fetch(`${base}/v1/upstreams`);
  assert.equal(up.status, 200);
  await up.body?.cancel();
  const head = await fetch(`${base}/v1/upstreams`, { method: "HEAD" });
  assert.equal(head.status, 200);
  for (
    const [method, path, body] of [
      ["POST", "/v1/reload", undefined],
      ["PUT", "/v1/upstreams/dyn", JSON.stringify({ members: [{ address: "127.0.0.1:9" }] })],
      ["POST", "/v1/cache/purge", JSON.stringify({ all: true })],
      ["DELETE", "/v1/upstreams/dyn", undefined],
    ] as const
  ) {
    const res = await fetch(`${base}${path}`, { method, body });
    assert.equal(res.status, 403, `${method} ${path}`);
    assert.match(res.headers.get("content-type") ?? "", /application\/json/);
    assert.deepEqual(await res.json(), {
      error: `server.admin.http is read-only (GET and HEAD): send ${method} to the admin socket ` +
        `${s.adminSocket}, or set server.admin.http.writes: true`,
    });
  }
  // Nothing changed, nothing audited.
  assert.equal(s.server.generation.id, 1);
  assert.ok(!s.logs.some((l) => l.includes('"admin_audit"')), s.logs.join("\n"));
});

Deno.test("admin http: writes: true allows changes, audited with who http and the peer address", async () => {
  await using s = await startScalwsd(CONFIG(true));
  const base = `http://127.0.0.1:${s.admin.bound.get("http")!.port}`;
  const reload = await fetch(`${base}/v1/reload`, { method: "POST" });
  assert.equal(reload.status, 200);
  await reload.body?.cancel();
  const put = await fetch(`${base}/v1/upstreams/dyn`, {
    method: "PUT",
    body: JSON.stringify({ members: [{ address: "127.0.0.1:9" }] }),
  });
  assert.equal(put.status, 200);
  await put.body?.cancel();
  const audits = s.logs.filter((l) => l.includes('"admin_audit"')).map((l) => JSON.parse(l));
  assert.deepEqual(audits.map((a) => [a.who, a.action, a.result]), [
    ["http", "reload", "ok"],
    ["http", "set_members", "ok"],
  ]);
  for (const a of audits) assert.match(a.peer, /^127\.0\.0\.1:\d+$/);
  // The admin socket stays "socket", with no peer.
  const viaSocket = await fetch("http://localhost/v1/reload", {
    method: "POST",
    client: Deno.createHttpClient({ proxy: { transport: "unix", path: s.adminSocket } }),
  });
  assert.equal(viaSocket.status, 200);
  await viaSocket.body?.cancel();
  const last = JSON.parse(s.logs.filter((l) => l.includes('"admin_audit"')).at(-1)!);
  assert.equal(last.who, "socket");
  assert.equal(last.peer, undefined);
});
