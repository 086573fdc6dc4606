/**
 * `tls.acme` under the controller: two instances on reusePort listeners and one state_dir,
 * pebble on loopback. One instance orders; both serve the one certificate pebble issued.
 */
import assert from "node:assert/strict";
import { waitUntil } from "./_support/mod.ts";
import { ControllerProcess, freeRange } from "./_support/controller.ts";
import { startPebble } from "./_support/pebble.ts";
import { freePort } from "./_support/ports.ts";
import { TlsClient } from "./_support/tls_client.ts";

async function acmeMetrics(address: string): Promise<string[]> {
  const res = await fetch(`http://${address}/metrics`);
  return (await res.text()).split("\n").filter((l) => l.startsWith("scalws_acme_"));
}

Deno.test({
  name: "acme under the controller: one instance orders, every instance serves the certificate",
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "scalwsd-acme-ctl-" });
    const httpPort = freePort();
    const httpsPort = freePort();
    await using pebble = await startPebble({ httpPort, names: ["a.test"] });
    await Deno.writeTextFile(
      `${dir}/scalws.yaml`,
      `
server:
  listener_mode: reuseport
  state_dir: ${dir}/shared
  access_log: "off"
  listeners:
    - {name: http, address: "127.0.0.1:${httpPort}"}
    - name: https
      address: "127.0.0.1:${httpsPort}"
      tls:
        acme: {directory: "${pebble.directory}", domains: [a.test], ca_file: ${pebble.caFile}}
tenants:
  - name: t
    applications:
      - {name: a, domains: [a.test], runtime: {type: respond, body: "app a"}}
`,
    );
    const metricsBase = freeRange(2);
    await Deno.writeTextFile(
      `${dir}/controller.yaml`,
      `state_dir: ${dir}/state
config: ${dir}/scalws.yaml
instances: {min: 2, max: 2, initial: 2}
metrics_base: "127.0.0.1:${metricsBase}"
probe_interval: 100ms
start_timeout: 20s
autoscaling: off
`,
    );
    const ctl = new ControllerProcess(`${dir}/controller.yaml`);
    try {
      const addresses = [0, 1].map((k) => `127.0.0.1:${metricsBase + k}`);
      const metrics = await waitUntil(async () => {
        const m = await Promise.all(addresses.map(acmeMetrics));
        return m.every((lines) => lines.some((l) => l.includes("expiry"))) && m;
      }, {
        what: "both instances serving an ACME certificate",
        timeoutMs: 30_000,
        intervalMs: 100,
      });
      const expiry = metrics.map((lines) => lines.find((l) => l.includes("expiry")));
      assert.equal(expiry[0], expiry[1]);
      const ok = metrics.flat().filter((l) => l.includes('result="ok"'));
      assert.deepEqual(ok, ['scalws_acme_orders_total{domain="a.test",result="ok"} 1']);
      assert.equal(pebble.output().match(/Issued certificate serial/g)?.length, 1);
      const root = await pebble.issuerRoot();
      for (let i = 0; i < 6; i++) {
        await using c = await TlsClient.connect(httpsPort, root, "a.test");
        assert.deepEqual(await c.get("a.test"), { status: 200, body: "app a" });
      }
    } finally {
      await ctl.stopAll(`${dir}/state/control.sock`, dir);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
