/**
 * Drains that lose no request (issue 29), as a user sees them: keep-alive clients (Deno's
 * fetch, and raw HTTP/1.1 keep-alive connections as curl and wrk keep them) send without pause
 * through `scalwsd controller` across scale 1 -> 3, a rolling reload and scale 3 -> 1, and to
 * `scalwsd run` when it gets SIGTERM. Every request is answered or was never sent. The ten-round
 * soak, with and without `net.ipv4.tcp_migrate_req`, is `deno task drain-soak`.
 */
import assert from "node:assert/strict";
import {
  drainRound,
  MIGRATE_REQ,
  readSysctl,
  runDrainRound,
  writeSysctl,
} from "./_support/drain_round.ts";
import { ControllerProcess, freeRange, type StatusJson, unixFetch } from "./_support/controller.ts";
import { waitUntil } from "./_support/wait.ts";
import { app, respond, scalwsYaml } from "./_support/yaml.ts";

/** Root here: the rounds may set the sysctl (and put it back). */
const root = Deno.uid() === 0;

Deno.test({
  name:
    "drain: scale 1 -> 2, rolling reload, scale 2 -> 1 under keep-alive clients, no request fails",
  sanitizeResources: false,
  async fn() {
    // Without tcp_migrate_req (the harder case) where the test may set it, else as it is.
    // Two instances keep the round short (instances start one at a time); the soak runs 3.
    const r = await drainRound({
      migrate: root ? "0" : "controller",
      holdMs: 250,
      loops: 3,
      instances: 2,
    });
    const lines = r.tally.lines();
    console.log(
      `drain round (tcp_migrate_req ${r.migrateReq}):\n  ${lines.join("\n  ")}`,
      r.durations,
    );
    assert.equal(r.tally.totalFailed, 0, lines.join("\n"));
    for (const phase of ["scale 1->2", "rolling reload", "scale 2->1"]) {
      assert.ok((r.tally.phases.get(phase)?.ok ?? 0) > 20, `few answers in ${phase}`);
    }
    // The clients moved to the new generation.
    assert.ok((r.tally.bodies.get("g2") ?? 0) > 0, "no answer from generation 2");
  },
});

Deno.test({
  name:
    "drain: SIGTERM to scalwsd run under keep-alive clients, every request answered or never sent",
  sanitizeResources: false,
  async fn() {
    const t = await runDrainRound({ holdMs: 300, loops: 3 });
    const lines = t.lines();
    assert.equal(t.totalFailed, 0, lines.join("\n"));
    assert.ok((t.phases.get("serving")?.ok ?? 0) > 10, lines.join("\n"));
  },
});

Deno.test({
  name: "controller: sets net.ipv4.tcp_migrate_req to 1 when it may, logs it, and reports it",
  ignore: !root,
  sanitizeResources: false,
  async fn() {
    const before = await readSysctl();
    assert.ok(before !== null, `${MIGRATE_REQ} unreadable`);
    const dir = await Deno.makeTempDir({ prefix: "scalwsd-migrate-" });
    const config = `${dir}/scalws.yaml`;
    await Deno.writeTextFile(
      config,
      scalwsYaml({
        server: {
          listener_mode: "reuseport",
          listeners: [{ name: "http", address: `127.0.0.1:${freeRange(1)}` }],
          admin: undefined,
          access_log: "off",
        },
        apps: [app(respond("x"))],
      }),
    );
    const status = async (file: string) => {
      const ctl = new ControllerProcess(file);
      try {
        return await waitUntil(
          async () =>
            (await unixFetch(`${dir}/state/control.sock`, "/v1/status")).json as StatusJson,
          { what: "the controller's status", timeoutMs: 15_000, intervalMs: 50 },
        );
      } finally {
        await ctl.stopAll(`${dir}/state/control.sock`, dir, 0);
        await Deno.remove(`${dir}/state`, { recursive: true }).catch(() => {});
      }
    };
    const metrics = freeRange(4);
    const ctlYaml = (mode: string) =>
      `state_dir: ${dir}/state\nconfig: ${config}\ninstances: {min: 1, max: 1, initial: 1}\n` +
      `cpus: "0"\nmetrics_base: "127.0.0.1:${metrics}"\nautoscaling: off\n` +
      `tcp_migrate_req: ${mode}\n`;
    try {
      assert.ok(await writeSysctl("0"));
      // leave: reported and warned about, not changed.
      await Deno.writeTextFile(`${dir}/leave.yaml`, ctlYaml("leave"));
      const left = await status(`${dir}/leave.yaml`);
      assert.equal(left.controller.tcp_migrate_req, "0");
      const warnings = (left.controller as unknown as { warnings: string[] }).warnings;
      assert.equal(warnings.length, 1);
      assert.match(
        warnings[0],
        /^net\.ipv4\.tcp_migrate_req is 0: .*sysctl -w net\.ipv4\.tcp_migrate_req=1/,
      );
      assert.equal(await readSysctl(), "0");
      // enable (the default): set, logged, reported.
      await Deno.writeTextFile(`${dir}/enable.yaml`, ctlYaml("enable"));
      const ctl = new ControllerProcess(`${dir}/enable.yaml`);
      try {
        const s = await waitUntil(
          async () =>
            (await unixFetch(`${dir}/state/control.sock`, "/v1/status")).json as StatusJson,
          { what: "the controller's status", timeoutMs: 15_000, intervalMs: 50 },
        );
        assert.equal(s.controller.tcp_migrate_req, "1");
        assert.deepEqual((s.controller as unknown as { warnings: string[] }).warnings, []);
        assert.equal(await readSysctl(), "1");
        const ev = ctl.events("tcp_migrate_req_enabled");
        assert.equal(ev.length, 1);
        assert.equal(ev[0].previous, "0");
      } finally {
        await ctl.stopAll(`${dir}/state/control.sock`, dir, 0);
      }
    } finally {
      await writeSysctl(before!);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
