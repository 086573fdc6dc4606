/**
 * ADR-0035 details of the controller with real processes on loopback, one controller and one
 * instance: the instance is seen `warming` while it prepares its generation, a reload that
 * `scalwsd check` would refuse changes nothing, a hung (stopped) active instance fails liveness
 * and is restarted, the unenforced cgroup limits are said in the log, and the host limits
 * (`max_instances`, `min_free_ram`) bound scaling; the PressureScore components are exported.
 */
import assert from "node:assert/strict";
import { startFakeDns } from "../src/discovery/_dns_test_server.ts";
import { app, respond, scalwsYaml, tempDir, waitUntil } from "./_support/mod.ts";
import { ControllerProcess, freeRange, type StatusJson, unixFetch } from "./_support/controller.ts";

Deno.test({
  name:
    "controller: warming seen, a reload check refuses changes nothing, a hung instance is restarted, host limits hold",
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir("scalwsd-ctl-life-");
    await using dns = startFakeDns();
    // The dns pool's first answer is part of preparing: held back until warming was seen.
    dns.set("api.test", "A", { drop: true });
    const port = freeRange(1);
    const metricsBase = freeRange(6);
    const config = `${dir.path}/scalws.yaml`;
    const scalws = (upstreams: Record<string, unknown> = {}, server = {}) =>
      scalwsYaml({
        server: {
          listener_mode: "reuseport",
          listeners: [{ name: "http", address: `127.0.0.1:${port}` }],
          admin: undefined,
          access_log: "off",
          resolver: `127.0.0.1:${dns.port}`,
          ...server,
        },
        upstreams: {
          dyn: { members_from: "dns", dns: { name: "api.test", type: "A", port: 9 } },
          ...upstreams,
        },
        apps: [app(respond("hi"), { domains: ["example.test"] })],
      });
    await Deno.writeTextFile(config, scalws());
    const ctlFile = `${dir.path}/controller.yaml`;
    await Deno.writeTextFile(
      ctlFile,
      `state_dir: ${dir.path}/state
config: ${config}
instances: {min: 1, initial: 1}
max_instances: 2
min_free_ram: 1000TiB
cpus: "0"
metrics_base: "127.0.0.1:${metricsBase}"
probe_interval: 100ms
liveness_timeout: 1s
evaluation_interval: 300ms
max_restarts: 1
drain_timeout: 2s
kill_grace: 1s
autoscaling: off
tcp_migrate_req: leave
`,
    );
    const socket = `${dir.path}/state/control.sock`;
    const status = async () => (await unixFetch(socket, "/v1/status")).json as StatusJson;
    const active = () =>
      waitUntil(async () => {
        const s = await status().catch(() => undefined);
        const i = s?.instances.find((i) => i.wanted && i.state === "active");
        return i === undefined ? undefined : i;
      }, { what: "an active instance", timeoutMs: 20_000, intervalMs: 50 });
    const ctl = new ControllerProcess(ctlFile);
    try {
      await waitUntil(
        () =>
          Promise.resolve(
            ctl.events("instance_state").some((e) => e.to === "warming") || undefined,
          ),
        { what: "web-0 seen warming", timeoutMs: 20_000, intervalMs: 20 },
      );
      dns.set("api.test", "A", {
        records: [{ name: "api.test", type: 1, ttl: 30, address: "127.0.0.1" }],
      });
      const first = await active();
      assert.deepEqual(
        ctl.events("instance_state").filter((e) => e.pid === first.pid).map((e) => e.to),
        ["warming", "ready", "active"],
      );
      assert.equal(ctl.events("cgroup_limits_unenforced").length, 1);
      // A stray SIGUSR2 to the controller is logged and ignored (its default action ends it).
      Deno.kill(ctl.pid, "SIGUSR2");
      await waitUntil(
        () => Promise.resolve(ctl.events("signal_ignored").length === 1 || undefined),
        {
          what: "signal_ignored after SIGUSR2",
          timeoutMs: 5_000,
        },
      );
      assert.equal((await status()).controller.pid, ctl.pid);

      // What `scalwsd check` refuses (a CA file that cannot be read) is refused by reload too.
      const generations = `${dir.path}/state/generations`;
      const before = [...Deno.readDirSync(generations)].map((e) => e.name).sort();
      const saved = await Deno.readTextFile(`${dir.path}/state/controller.json`);
      await Deno.writeTextFile(
        config,
        scalws({
          sec: {
            members: [{ address: "127.0.0.1:9" }],
            scheme: "https",
            tls: { ca_file: `${dir.path}/missing-ca.pem` },
          },
        }),
      );
      const r = await unixFetch(socket, "/v1/reload", { method: "POST" });
      assert.equal(r.status, 400);
      const errors = (r.json as { errors: string[] }).errors;
      assert.equal(errors.length, 1);
      assert.match(errors[0], /upstreams\.sec\.tls\.ca_file: cannot read/);
      assert.deepEqual([...Deno.readDirSync(generations)].map((e) => e.name).sort(), before);
      assert.equal(await Deno.readTextFile(`${dir.path}/state/controller.json`), saved);
      await Deno.writeTextFile(`${dir.path}/short.key`, "abc");
      await Deno.writeTextFile(
        config,
        scalws({}, { affinity_key_file: `${dir.path}/short.key` }),
      );
      const k = await unixFetch(socket, "/v1/reload", { method: "POST" });
      assert.equal(k.status, 400);
      assert.match((k.json as { errors: string[] }).errors[0], /server\.affinity_key_file: /);
      assert.deepEqual([...Deno.readDirSync(generations)].map((e) => e.name).sort(), before);
      // An instance serves the generation it was started on: its own reload is refused.
      const own = await unixFetch(
        `${dir.path}/state/sockets/web-0.sock`,
        "/v1/reload",
        { method: "POST" },
      );
      assert.deepEqual(own, {
        status: 409,
        json: {
          error:
            `reloads are rolled by the controller: POST /v1/reload on its control socket ${socket}`,
        },
      });

      // A stopped process answers nothing and would keep taking connections: killed, restarted.
      Deno.kill(first.pid, "SIGSTOP");
      const next = await waitUntil(async () => {
        const i = await active();
        return i.pid !== first.pid ? i : undefined;
      }, { what: "web-0 restarted", timeoutMs: 20_000, intervalMs: 100 });
      assert.equal(next.id, first.id);
      const failed = ctl.events("liveness_failed");
      assert.equal(failed.length, 1);
      assert.equal(failed[0].pid, first.pid);
      assert.equal(failed[0].liveness_timeout_ms, 1_000);

      // A second failure within restart_window is one more than max_restarts: the slot stays
      // failed (an alert line) until the operator scales, even to the same count.
      Deno.kill(next.pid, "SIGKILL");
      await waitUntil(
        () => Promise.resolve(ctl.events("instance_gave_up").length === 1 || undefined),
        { what: "instance_gave_up", timeoutMs: 10_000, intervalMs: 50 },
      );
      assert.equal(ctl.events("instance_gave_up")[0].alert, true);
      const post = (path: string, body: unknown) =>
        unixFetch(socket, path, { method: "POST", body: JSON.stringify(body) });
      assert.equal((await post("/v1/scale", { instances: 1 })).status, 200);
      const third = await active();
      assert.ok(third.pid !== next.pid && third.id === first.id);

      // Host limits: max_instances caps scale; below min_free_ram no instance is added.
      const scale = (n: number) =>
        unixFetch(socket, "/v1/scale", { method: "POST", body: JSON.stringify({ instances: n }) });
      assert.deepEqual(await scale(3), {
        status: 400,
        json: { error: "instances: must be an integer between 1 and 2, not 3" },
      });
      assert.equal((await scale(2)).status, 200);
      const s = await status();
      assert.match(
        s.controller.next_step,
        /^wait: 1 instances, 2 wanted; free RAM \d+ MiB is below min_free_ram 1048576000 MiB$/,
      );
      assert.equal(s.instances.filter((i) => i.wanted && i.state !== "stopped").length, 1);

      // Every PressureScore component is exported (ADR-0034): GET /metrics on the control socket.
      const metrics = await waitUntil(async () => {
        using client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
        const text = await (await fetch("http://localhost/metrics", { client })).text();
        return /^scalws_controller_pressure\{component="cpu_lag"\} /m.test(text) ? text : undefined;
      }, { what: "pressure metrics", timeoutMs: 10_000, intervalMs: 200 });
      assert.match(metrics, /^scalws_controller_instances\{state="active"\} 1$/m);
      assert.match(metrics, /^scalws_controller_desired_instances 2$/m);
      assert.match(
        metrics,
        /^scalws_controller_instance_pressure\{instance="web-0",component="score"\} /m,
      );
    } finally {
      await ctl.stopAll(socket, dir.path);
    }
  },
});
