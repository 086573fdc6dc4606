/**
 * The controller end to end, with real processes on loopback: `scalwsd controller` started
 * from source with the `run` task's permissions, instances on SO_REUSEPORT, and a steady
 * keep-alive load that must see no failed request through scaling 1 -> 2 -> 3 -> 1, a rolling
 * reload, a reload while scaling, a controller restart (instances re-adopted with the same
 * PIDs) and a killed instance (restarted in its slot).
 */
import assert from "node:assert/strict";
import { KeepAliveLoad, type LoadStats } from "./_support/keep_alive_load.ts";
import { app, respond, scalwsYaml, sleep, waitUntil } from "./_support/mod.ts";

import {
  alive,
  ControllerProcess,
  freeRange,
  MAIN,
  RUN_FLAGS,
  type StatusJson,
  tcpText,
  unixFetch,
} from "./_support/controller.ts";
/** The instances' configuration: one reuseport listener on `port`, answering `body`. */
const SCALWS = (port: number, body: string) =>
  scalwsYaml({
    server: {
      listener_mode: "reuseport",
      listeners: [{ name: "http", address: `127.0.0.1:${port}` }],
      admin: undefined,
      access_log: "off",
    },
    apps: [app(respond(body), { domains: ["example.test"] })],
  });

Deno.test({
  name:
    "controller: scaling, rolling reloads, a controller restart and a killed instance under load, no failed request",
  sanitizeResources: false,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "scalwsd-ctl-" });
    const port = freeRange(1);
    const metricsBase = freeRange(12);
    const config = `${dir}/scalws.yaml`;
    await Deno.writeTextFile(config, SCALWS(port, "g1"));
    const ctlFile = `${dir}/controller.yaml`;
    // Thresholds low enough that the test load counts as a saturated web tier once enabled.
    const controllerYaml = (autoscaling: string) =>
      `state_dir: ${dir}/state
config: ${config}
instances: {min: 1, max: 4, initial: 1}
cpus: "0-1"
metrics_base: "127.0.0.1:${metricsBase}"
probe_interval: 100ms
evaluation_interval: 250ms
drain_timeout: 3s
kill_grace: 1s
start_timeout: 20s
autoscaling: ${autoscaling}
scale_out_above: 0.02
scale_in_below: 0.01
scale_out_after: 500ms
cooldown: 1s
`;
    await Deno.writeTextFile(ctlFile, controllerYaml("off"));
    const socket = `${dir}/state/control.sock`;
    const seenPids = new Set<number>();
    const status = async () => {
      const s = (await unixFetch(socket, "/v1/status")).json as StatusJson;
      for (const i of s.instances) if (i.pid > 0) seenPids.add(i.pid);
      return s;
    };
    const serving = (s: StatusJson) => s.instances.filter((i) => i.wanted && i.state === "active");
    const settled = (n: number, generation: number) =>
      waitUntil(async () => {
        const s = await status();
        const running = s.instances.filter((i) => !["stopped", "failed"].includes(i.state));
        const ok = s.controller.next_step === "idle" && running.length === n &&
          running.every((i) => i.state === "active" && i.wanted && i.generation === generation);
        return ok ? s : undefined;
      }, {
        what: `${n} active instances on generation ${generation}`,
        timeoutMs: 20_000,
        intervalMs: 50,
      });
    const post = (path: string, body?: unknown) =>
      unixFetch(socket, path, {
        method: "POST",
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    /** Each instance has answered client requests since it started. */
    const allServe = (s: StatusJson) =>
      waitUntil(async () => {
        for (const i of serving(s)) {
          const text = await tcpText(i.metrics, "/metrics");
          const m = /^scalws_http_requests_total\{[^}]*class="2xx"\} (\d+)/m.exec(text);
          if (m === null || Number(m[1]) === 0) return undefined;
        }
        return true;
      }, { what: "every instance to serve requests", timeoutMs: 15_000, intervalMs: 50 });
    const noFailures = (stats: LoadStats, what: string) =>
      assert.equal(stats.failed, 0, `${what}: ${stats.errors.join("; ")}`);
    // A draining instance half-closes a keep-alive connection idle past about 1 s: a request
    // sent at that instant is resent (no response byte came). At most once per connection and
    // drain; a killed instance can cost two (reset, then a connect to its dying listener).
    const CONNS = 4;
    let resentBefore = 0;
    const resends = (what: string, max: number) => {
      const n = load!.stats.retried - resentBefore;
      resentBefore = load!.stats.retried;
      assert.ok(n <= max, `${what}: ${n} requests resent, at most ${max} expected`);
      perStep.push(`${what} ${n}`);
    };
    const perStep: string[] = [];

    let ctl = new ControllerProcess(ctlFile);
    let load: KeepAliveLoad | null = null;
    try {
      await settled(1, 1);
      load = new KeepAliveLoad(port).start();
      await waitUntil(() => Promise.resolve(load!.stats.ok > 100 || undefined), {
        what: "load to run",
        timeoutMs: 15_000,
        intervalMs: 50,
      });

      await t.step("scale 1 -> 2 -> 3 -> 1", async () => {
        for (const n of [2, 3]) {
          assert.equal((await post("/v1/scale", { instances: n })).status, 200);
          await allServe(await settled(n, 1));
        }
        const before = load!.stats.ok;
        assert.equal((await post("/v1/scale", { instances: 1 })).status, 200);
        const s = await settled(1, 1);
        assert.deepEqual(serving(s).map((i) => i.id), ["web-0"]);
        await waitUntil(() => Promise.resolve(load!.stats.ok > before + 200 || undefined), {
          what: "requests after scale-in",
          timeoutMs: 15_000,
          intervalMs: 50,
        });
        noFailures(load!.stats, "scaling");
        resends("scaling", 2 * CONNS);
      });

      await t.step("rolling reload keeps capacity at the desired count", async () => {
        assert.equal((await post("/v1/scale", { instances: 2 })).status, 200);
        await settled(2, 1);
        await Deno.writeTextFile(config, SCALWS(port, "g2"));
        const r = await post("/v1/reload");
        assert.deepEqual([r.status, r.json], [200, { generation: 2, previous: 1, warnings: [] }]);
        let minActive = Infinity;
        await waitUntil(async () => {
          const s = await status();
          minActive = Math.min(minActive, serving(s).length);
          const running = s.instances.filter((i) => !["stopped", "failed"].includes(i.state));
          return s.controller.next_step === "idle" && running.length === 2 &&
            running.every((i) => i.state === "active" && i.generation === 2);
        }, { what: "rollout to generation 2", timeoutMs: 20_000, intervalMs: 50 });
        assert.ok(minActive >= 2, `active instances dropped to ${minActive} during the rollout`);
        const seenG2 = load!.stats.bodies.get("g2") ?? 0;
        await waitUntil(
          () => Promise.resolve(load!.stats.bodies.get("g2")! > seenG2 + 200 || undefined),
          { what: "responses from generation 2", timeoutMs: 15_000, intervalMs: 50 },
        );
        const g1 = load!.stats.bodies.get("g1")!;
        await sleep(300);
        assert.equal(
          load!.stats.bodies.get("g1"),
          g1,
          "generation 1 still answers after the rollout",
        );
        noFailures(load!.stats, "rolling reload");
        resends("rolling reload", 2 * CONNS);
      });

      await t.step("reload while scaling converges on the new generation and count", async () => {
        await Deno.writeTextFile(config, SCALWS(port, "g3"));
        assert.equal((await post("/v1/scale", { instances: 3 })).status, 200);
        assert.equal((await post("/v1/reload")).status, 200);
        await allServe(await settled(3, 3));
        noFailures(load!.stats, "reload while scaling");
        resends("reload while scaling", 2 * CONNS);
      });

      await t.step("a generation whose instance cannot listen aborts its rollout", async () => {
        // A plain listener (no SO_REUSEPORT) on the new port makes the new instance's bind fail.
        const blocker = Deno.listen({ hostname: "127.0.0.1", port: freeRange(1) });
        try {
          await Deno.writeTextFile(config, SCALWS((blocker.addr as Deno.NetAddr).port, "g4"));
          assert.equal((await post("/v1/reload")).status, 200);
          const s = await waitUntil(async () => {
            const s = await status();
            return s.controller.generation === 3 && ctl.events("rollout_aborted").length === 1
              ? s
              : undefined;
          }, { what: "the rollout to be aborted", timeoutMs: 15_000, intervalMs: 50 });
          assert.equal(s.controller.generation, 3);
          await settled(3, 3);
          await sleep(1_500);
          const spawned = ctl.events("instance_spawned").filter((e) => e.generation === 4);
          assert.equal(spawned.length, 1, "the failed generation was started more than once");
          assert.equal((await post("/v1/rollback")).status, 409);
          noFailures(load!.stats, "aborted rollout");
          resends("aborted rollout", 0);
        } finally {
          blocker.close();
          await Deno.writeTextFile(config, SCALWS(port, "g3"));
        }
      });

      await t.step(
        "a restarted controller re-adopts its instances without restarting them",
        async () => {
          const before = await status();
          const pids = serving(before).map((i) => [i.id, i.pid]);
          assert.equal((await ctl.stop("SIGTERM")).code, 0);
          assert.ok(ctl.events("controller_stopped").length === 1);
          const ok = load!.stats.ok;
          await waitUntil(() => Promise.resolve(load!.stats.ok > ok + 200 || undefined), {
            what: "instances serving without a controller",
            timeoutMs: 15_000,
            intervalMs: 50,
          });
          // Allowed from now on, but still off: a `disable` (here the first run's `off`) persists.
          await Deno.writeTextFile(ctlFile, controllerYaml("on"));
          ctl = new ControllerProcess(ctlFile);
          const after = await settled(3, 3);
          assert.deepEqual(serving(after).map((i) => [i.id, i.pid]), pids);
          assert.ok(
            serving(after).every((i) => i.adopted),
          );
          assert.deepEqual(ctl.events("adopted").map((e) => [e.id, e.pid]), pids);
          assert.equal(after.controller.autoscaling, false);
          const second = new ControllerProcess(ctlFile);
          assert.equal((await second.exited()).code, 1);
          assert.deepEqual(second.lines, [
            `scalwsd controller: another controller (PID ${ctl.pid}) uses the state directory ${dir}/state`,
          ]);
          assert.equal(ctl.events("instance_spawned").length, 0);
          noFailures(load!.stats, "controller restart");
          resends("controller restart", 0);
        },
      );

      await t.step("a killed instance is restarted in its slot after the backoff", async () => {
        const victim = serving(await status())[1];
        assert.equal(await alive(victim.pid, dir), true);
        Deno.kill(victim.pid, "SIGKILL");
        const s = await waitUntil(async () => {
          const s = await status();
          const w = s.instances.find((i) => i.id === victim.id)!;
          return w.state === "active" && w.pid !== victim.pid ? s : undefined;
        }, { what: `${victim.id} to come back`, timeoutMs: 15_000, intervalMs: 50 });
        assert.equal(serving(s).length, 3);
        const scheduled = ctl.events("restart_scheduled");
        assert.deepEqual(scheduled.map((e) => [e.id, e.in_ms]), [[victim.id, 1000]]);
        assert.equal(ctl.events("instance_spawned").length, 1);
        await allServe(s);
        noFailures(load!.stats, "killed instance");
        resends("killed instance", 2 * CONNS);
      });

      await t.step(
        "every evaluation is logged with its evidence; PUT of members to an unknown pool answers 404",
        async () => {
          const s = await waitUntil(async () => {
            const s = await status();
            return s.last_evaluation?.evidence.length === 3 ? s : undefined;
          }, {
            what: "an evaluation with evidence of every instance",
            timeoutMs: 15_000,
            intervalMs: 50,
          });
          assert.equal(s.last_evaluation!.action, "None");
          assert.match(s.last_evaluation!.reason, /^autoscaling is disabled; /);
          // Read through the shell when Deno does not grant /proc directly (the task's flags).
          assert.match(String(s.controller.tcp_migrate_req), /^[0-9]$/);
          assert.equal(s.controller.limits.cpu_affinity, "taskset");
          assert.deepEqual(
            s.last_evaluation!.evidence.map((e) => e.id),
            serving(s).map((i) => i.id),
          );
          assert.ok(ctl.events("evaluation").length > 0);
          const put = await unixFetch(socket, "/v1/upstreams/api", {
            method: "PUT",
            body: '{"members":[]}',
          });
          assert.deepEqual([put.status, put.json], [404, { error: 'no pool named "api"' }]);
          const up = await unixFetch(socket, "/upstreams");
          assert.equal(up.status, 200);
          assert.equal((up.json as { agree: boolean }).agree, true);
          assert.deepEqual((up.json as { upstreams: unknown[] }).upstreams, []);
        },
      );

      await t.step(
        "autoscaling scales out a saturated web tier up to max; disable freezes the count",
        async () => {
          assert.deepEqual((await post("/v1/autoscaling/enable")).json, { autoscaling: true });
          const s = await settled(4, 3);
          const out = ctl.events("autoscaled");
          assert.deepEqual(out.map((e) => [e.action, e.to]), [["ScaleOut", 4]]);
          assert.match(
            String(out[0].reason),
            /^saturated for \d+\.\ds; web tier cpu_lag \d\.\d\d >= 0\.02/,
          );
          const evals = ctl.events("evaluation").filter((e) => e.action === "ScaleOut");
          assert.equal(evals.length, 1);
          assert.equal(evals[0].class, "WebTierSaturated");
          assert.equal((evals[0].evidence as unknown[]).length, 3);
          assert.deepEqual((await post("/v1/autoscaling/disable")).json, { autoscaling: false });
          await sleep(1_000);
          const later = await status();
          assert.equal(later.controller.desired, 4);
          assert.equal(serving(later).length, serving(s).length);
          assert.match(later.last_evaluation!.reason, /^autoscaling is disabled; /);
          await allServe(later);
          noFailures(load!.stats, "autoscaling");
          resends("autoscaling", 0);
        },
      );

      const stats = await load.stop();
      load = null;
      noFailures(stats, "whole run");
      console.error(
        `controller load: ${stats.ok} requests, 0 failed, ${stats.retried} resent after a connection ` +
          `closed before any response byte (${perStep.join(", ")})`,
      );

      await t.step("scalwsd ctl --controller-socket stop drains every instance", async () => {
        const out = await new Deno.Command(Deno.execPath(), {
          args: [...RUN_FLAGS, MAIN, "ctl", "--controller-socket", socket, "stop"],
          stdout: "piped",
          stderr: "piped",
        }).output();
        assert.equal(new TextDecoder().decode(out.stdout), "stopping: draining every instance\n");
        assert.equal((await ctl.exited()).code, 0);
        assert.ok(seenPids.size >= 8, `only ${seenPids.size} instance PIDs seen`);
        for (const pid of seenPids) {
          assert.equal(await alive(pid, dir), false, `instance ${pid} still running`);
        }
      });
    } finally {
      if (load) await load.stop();
      await ctl.stop("SIGKILL");
      for (const pid of seenPids) {
        if (await alive(pid, dir)) Deno.kill(pid, "SIGKILL");
      }
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
