/**
 * Run-time members under the controller, end to end: the controller owns the lists of api
 * pools. A PUT on the control socket is checked like an instance would, recorded, and sent to
 * every instance; instances refuse PUTs of their own (409 naming the control socket); a
 * starting instance gets the lists before it is activated. Under a steady keep-alive load, a
 * PUT every 100 ms through scaling 1 -> 3 -> 1 and a rolling reload: no failed request, and at
 * the end every instance holds the last list.
 */
import assert from "node:assert/strict";
import { KeepAliveLoad } from "./_support/keep_alive_load.ts";
import { sleep, startMembers, waitUntil } from "./_support/mod.ts";
import {
  alive,
  ControllerProcess,
  freeRange,
  MAIN,
  RUN_FLAGS,
  type StatusJson,
  unixFetch,
} from "./_support/controller.ts";
import { readProcFile } from "../src/controller/proc.ts";

const SCALWS = (port: number, seed: string, body: string) => `
server:
  listener_mode: reuseport
  listeners: [{name: http, address: "127.0.0.1:${port}"}]
  access_log: "off"
upstreams:
  dyn: {members_from: api, members: [{address: "${seed}"}]}
  fixed: {members: [{address: "${seed}"}]}
tenants:
  - name: t
    applications:
      - name: a
        domains: [example.test]
        runtime: {type: proxy, upstream: {pool: dyn}}
        routes: [{path: /gen, runtime: {type: respond, body: "${body}"}}]
`;

interface PoolJson {
  name: string;
  members: { address: string; weight: number }[];
}

Deno.test({
  name:
    "controller: PUT every 100 ms through scaling 1 -> 3 -> 1 and a rolling reload; every instance ends with the last list",
  sanitizeResources: false,
  async fn() {
    await using ms = startMembers(["m0", "m1", "m2", "m3"]);
    const dir = await Deno.makeTempDir({ prefix: "scalwsd-ctl-members-" });
    const port = freeRange(1);
    const metricsBase = freeRange(8);
    const config = `${dir}/scalws.yaml`;
    await Deno.writeTextFile(config, SCALWS(port, ms[0].address, "g1"));
    const ctlFile = `${dir}/controller.yaml`;
    await Deno.writeTextFile(
      ctlFile,
      `state_dir: ${dir}/state
config: ${config}
instances: {min: 1, max: 3, initial: 1}
cpus: "0-1"
metrics_base: "127.0.0.1:${metricsBase}"
probe_interval: 100ms
drain_timeout: 3s
kill_grace: 1s
start_timeout: 20s
autoscaling: off
`,
    );
    const socket = `${dir}/state/control.sock`;
    const pids = new Set<number>();
    const status = async () => {
      const s = (await unixFetch(socket, "/v1/status")).json as StatusJson;
      for (const i of s.instances) if (i.pid > 0) pids.add(i.pid);
      return s;
    };
    const settled = (n: number, generation: number) =>
      waitUntil(async () => {
        const s = await status();
        const running = s.instances.filter((i) => !["stopped", "failed"].includes(i.state));
        return s.controller.next_step === "idle" && running.length === n &&
          running.every((i) => i.state === "active" && i.generation === generation);
      }, {
        what: `${n} active instances on generation ${generation}`,
        timeoutMs: 30_000,
        intervalMs: 50,
      });
    const put = (name: string, body: unknown) =>
      unixFetch(socket, `/v1/upstreams/${name}`, { method: "PUT", body: JSON.stringify(body) });
    const post = (path: string, body?: unknown) =>
      unixFetch(socket, path, {
        method: "POST",
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    const ctl = new ControllerProcess(ctlFile);
    let load: KeepAliveLoad | null = null;
    let putting: Promise<void> | null = null;
    let stopPuts = false;
    try {
      await settled(1, 1);

      // SIGUSR1 is blocked in the controller and its instance (never Deno's inspector), and the
      // controller passes it on: the instance reopens its logs.
      const web0 = (await status()).instances.find((i) => i.id === "web-0")!;
      for (const pid of [ctl.pid, web0.pid]) {
        const text = (await readProcFile(`/proc/${pid}/status`)) ?? "";
        const blocked = BigInt("0x" + (/SigBlk:\s*([0-9a-f]+)/.exec(text)?.[1] ?? "0"));
        assert.equal((blocked >> 9n) & 1n, 1n, `SIGUSR1 not blocked in ${pid}: ${text}`);
      }
      Deno.kill(ctl.pid, "SIGUSR1");
      await waitUntil(
        () =>
          Deno.readTextFile(`${dir}/state/logs/web-0.log`).then((t) => t.includes("logs_reopened")),
        { what: "web-0 to reopen its logs on the controller's SIGUSR1", timeoutMs: 5_000 },
      );

      // Checked as an instance checks, nothing recorded on a refusal.
      assert.deepEqual(await put("nope", { members: [] }), {
        status: 404,
        json: { error: 'no pool named "nope"' },
      });
      assert.deepEqual(await put("fixed", { members: [] }), {
        status: 409,
        json: {
          error: 'pool "fixed" has members_from: file; change its members in the configuration',
        },
      });
      assert.deepEqual(await put("dyn", { members: [{ address: ms[1].address, weight: 0 }] }), {
        status: 400,
        json: { error: "members[0].weight: must be between 1 and 1000" },
      });
      assert.deepEqual(
        (await unixFetch(socket, "/v1/upstreams/dyn", { method: "PUT", body: "{" })).json,
        { error: "body: invalid JSON" },
      );
      // An instance's own admin socket refuses, naming the control socket.
      const own = await unixFetch(`${dir}/state/sockets/web-0.sock`, "/v1/upstreams/dyn", {
        method: "PUT",
        body: JSON.stringify({ members: [] }),
      });
      assert.deepEqual(own, {
        status: 409,
        json: {
          error:
            `run-time members are set through the controller: PUT /v1/upstreams/dyn on its control socket ${socket}`,
        },
      });

      // The CLI: recorded, applied on web-0, answered with the pool.
      const cli = await new Deno.Command(Deno.execPath(), {
        args: [
          ...RUN_FLAGS,
          MAIN,
          "ctl",
          "--controller-socket",
          socket,
          "upstreams",
          "set",
          "dyn",
          `${ms[1].address}=2`,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const cliOut = new TextDecoder().decode(cli.stdout);
      assert.equal(cli.code, 0, new TextDecoder().decode(cli.stderr));
      assert.match(cliOut, /pool dyn/);
      assert.match(cliOut, /web-0 \(generation 1, active\): applied/);
      const stored = JSON.parse(await Deno.readTextFile(`${dir}/state/upstreams/dyn.json`));
      assert.deepEqual(stored.members, [{ address: ms[1].address, weight: 2 }]);

      load = new KeepAliveLoad(port).start();
      await waitUntil(() => load!.stats.ok > 50, { what: "load to run", timeoutMs: 15_000 });

      // A PUT every 100 ms, rotating through lists of live members.
      const lists = [[0, 1], [1, 2], [2, 3, 0], [3], [1, 3]].map((idx) =>
        idx.map((i, k) => ({ address: ms[i].address, weight: k + 1 }))
      );
      let last = lists[0];
      let puts = 0;
      const refused: string[] = [];
      putting = (async () => {
        for (let i = 0; !stopPuts && i < 2_000; i++) {
          const list = lists[i % lists.length];
          const r = await put("dyn", { members: list });
          if (r.status === 200) last = list;
          else refused.push(`${r.status} ${JSON.stringify(r.json)}`);
          puts++;
          await sleep(100);
        }
      })();

      assert.equal((await post("/v1/scale", { instances: 3 })).status, 200);
      await settled(3, 1);
      assert.equal((await post("/v1/scale", { instances: 1 })).status, 200);
      await settled(1, 1);
      await Deno.writeTextFile(config, SCALWS(port, ms[0].address, "g2"));
      assert.equal((await post("/v1/reload")).status, 200);
      await settled(1, 2);
      stopPuts = true;
      await putting;
      putting = null;
      assert.deepEqual(refused, []);
      assert.ok(puts >= 10, `only ${puts} PUTs`);

      // Every instance holds the last list, and the control socket says they agree.
      const view = await waitUntil(async () => {
        const r = (await unixFetch(socket, "/v1/upstreams")).json as {
          agree: boolean;
          upstreams: PoolJson[];
          instances: { id: string; agree: boolean }[];
        };
        return r.agree ? r : undefined;
      }, { what: "instances to agree", timeoutMs: 15_000, intervalMs: 100 });
      const dyn = view.upstreams.find((p) => p.name === "dyn")!;
      const asSet = (l: { address: string; weight: number }[]) =>
        l.map((m) => `${m.address}=${m.weight}`).sort();
      assert.deepEqual(asSet(dyn.members), asSet(last));
      const s = await status();
      for (const i of s.instances.filter((i) => i.state === "active")) {
        const own = (await unixFetch(`${dir}/state/sockets/${i.id}.sock`, "/v1/upstreams/dyn"))
          .json as PoolJson;
        assert.deepEqual(asSet(own.members), asSet(last), `${i.id} holds another list`);
      }
      const stats = await load.stop();
      load = null;
      assert.equal(stats.failed, 0, stats.errors.join("; "));
      assert.ok(
        ctl.events("members_synced").length >= 3,
        "new instances were synced before activation",
      );
      console.error(
        `controller members: ${puts} PUTs, ${stats.ok} requests, 0 failed, ${stats.retried} resent`,
      );
    } finally {
      stopPuts = true;
      await putting?.catch(() => {});
      if (load) await load.stop();
      await post("/v1/stop").catch(() => {});
      await Promise.race([ctl.exited(), sleep(15_000)]);
      await ctl.stop("SIGKILL");
      for (const pid of pids) if (await alive(pid, dir)) Deno.kill(pid, "SIGKILL");
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
