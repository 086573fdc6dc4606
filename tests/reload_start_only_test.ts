/**
 * Settings that scalwsd reads only at start (the admin and metrics listeners, the affinity key
 * file, the access log) are not applied by a reload; a reload that changes them says so in its
 * warnings instead of answering as if they had taken effect.
 */
import assert from "node:assert/strict";
import { adminFetch, app, respond, scalwsYaml, startScalwsd } from "./_support/mod.ts";

Deno.test("a reload that changes start-only settings warns that they need a restart", async () => {
  const yaml = (server: Record<string, unknown>, body = "a") =>
    scalwsYaml({ server, apps: [app(respond(body))] });
  await using s = await startScalwsd(yaml({}));
  await s.write(yaml({
    metrics: { address: "127.0.0.1:0" },
    affinity_key_file: "{{dir}}/affinity.key",
    access_log: "off",
  }));
  const r = await adminFetch(s.adminSocket, "/v1/reload", { method: "POST" });
  assert.equal(r.status, 200);
  const restart = "read only at start: the running process keeps its value until scalwsd restarts";
  assert.deepEqual((await r.json()).warnings, [
    `server.metrics: ${restart}`,
    `server.affinity_key_file: ${restart}`,
    `server.access_log: ${restart}`,
  ]);
  assert.ok(s.logs.some((l) => l.includes('"config_warning"') && l.includes("server.metrics")));
  // A reload that leaves them as they are says nothing more.
  await s.write(yaml({
    metrics: { address: "127.0.0.1:0" },
    affinity_key_file: "{{dir}}/affinity.key",
    access_log: "off",
  }, "b"));
  const again = await adminFetch(s.adminSocket, "/v1/reload", { method: "POST" });
  assert.deepEqual((await again.json()).warnings, [
    `server.metrics: ${restart}`,
    `server.affinity_key_file: ${restart}`,
    `server.access_log: ${restart}`,
  ]);
});
