/**
 * One member request per URL per host under the real controller: 3 instances on SO_REUSEPORT
 * sharing one disk tier. 300 requests for one cacheable URL over 30 new connections cost the
 * member one request; after the controller and its instances restart, 300 more still cost none;
 * an instance killed while it holds a fill is taken over by the others within the route's
 * `response_timeout`.
 */
import assert from "node:assert/strict";
import { scalwsYaml, sleep, startMember, waitUntil } from "./_support/mod.ts";
import { ControllerProcess, freeRange, type StatusJson, unixFetch } from "./_support/controller.ts";
import { RawConn } from "./_support/raw_conn.ts";
import { nameOf } from "../src/cache/disk_format.ts";

/** Response timeout of the cached route: a dead holder's fill is taken over after it. */
const TIMEOUT = 1_000;

Deno.test({
  name:
    "cache under the controller: one member request per URL for 3 instances, across a restart, and past a killed filler",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "scalwsd-cachectl-" });
    const counts = new Map<string, number>();
    let holdK = true;
    let releaseK!: () => void;
    const k = new Promise<void>((r) => releaseK = r);
    await using member = startMember("m", async (req) => {
      const path = new URL(req.url).pathname;
      counts.set(path, (counts.get(path) ?? 0) + 1);
      if (path === "/k" && holdK) {
        holdK = false;
        await k; // the first fill of /k never ends: its instance is killed meanwhile
      } else await sleep(300);
      return new Response(`body of ${path}`, { headers: { "cache-control": "max-age=600" } });
    });
    const port = freeRange(1);
    const metricsBase = freeRange(4);
    const config = `${dir}/scalws.yaml`;
    await Deno.writeTextFile(
      config,
      scalwsYaml({
        server: {
          listener_mode: "reuseport",
          listeners: [{ name: "http", address: `127.0.0.1:${port}` }],
          admin: undefined,
          access_log: "off",
          cache: { path: `${dir}/cache` },
        },
        upstreams: { p: { members: [{ address: member.address }], retries: 0 } },
        apps: [{
          name: "a",
          domains: ["a.test"],
          runtime: { type: "proxy", upstream: { pool: "p" }, response_timeout: `${TIMEOUT}ms` },
          cache: {},
        }],
      }),
    );
    const ctlFile = `${dir}/controller.yaml`;
    await Deno.writeTextFile(
      ctlFile,
      `state_dir: ${dir}/state
config: ${config}
instances: {min: 3, max: 3, initial: 3}
metrics_base: "127.0.0.1:${metricsBase}"
probe_interval: 100ms
evaluation_interval: 1s
drain_timeout: 1s
kill_grace: 500ms
start_timeout: 20s
autoscaling: off
`,
    );
    const socket = `${dir}/state/control.sock`;
    const active = () =>
      waitUntil(async () => {
        try {
          const s = (await unixFetch(socket, "/v1/status")).json as StatusJson;
          const up = s.instances.filter((i) => i.wanted && i.state === "active");
          return up.length === 3 ? s : undefined;
        } catch {
          return undefined;
        }
      }, { what: "3 active instances", timeoutMs: 20_000, intervalMs: 50 });

    /** `n` requests for `path` over `conns` new keep-alive connections; every status. */
    const storm = async (path: string, conns: number, n: number) => {
      const statuses: number[] = [];
      await Promise.all(Array.from({ length: conns }, async () => {
        await using c = await RawConn.open(port);
        for (let i = 0; i < n / conns; i++) {
          await c.write(`GET ${path} HTTP/1.1\r\nhost: a.test\r\n\r\n`);
          const r = await c.response(5_000);
          statuses.push(r?.status ?? 0);
        }
      }));
      return statuses;
    };

    let ctl = new ControllerProcess(ctlFile);
    try {
      await active();

      await t.step(
        "300 requests over 30 connections to 3 instances: one member request",
        async () => {
          const st = await storm("/one", 30, 300);
          assert.equal(st.length, 300);
          assert.ok(st.every((s) => s === 200));
          assert.equal(counts.get("/one"), 1);
        },
      );

      await t.step("after the controller and its instances restart: none", async () => {
        await ctl.stopAll(socket, dir, 5_000);
        ctl = new ControllerProcess(ctlFile);
        await active();
        const st = await storm("/one", 30, 300);
        assert.ok(st.every((s) => s === 200));
        assert.equal(counts.get("/one"), 1);
      });

      await t.step(
        "an instance killed while it holds a fill: the others fill it within the timeout",
        async () => {
          const first = RawConn.open(port).then(async (c) => {
            await c.write("GET /k HTTP/1.1\r\nhost: a.test\r\n\r\n");
            return c;
          });
          const lock = `${dir}/cache/v1/locks/${nameOf("http://a.test/k")}`;
          const holder = await waitUntil(() => {
            try {
              return Number(Deno.readTextFileSync(lock).split(" ")[0]) || undefined;
            } catch {
              return undefined;
            }
          }, { what: "the fill lock of /k" });
          await waitUntil(() => counts.get("/k") === 1, { what: "the first fill at the member" });
          Deno.kill(holder, "SIGKILL");
          const t0 = performance.now();
          const st = await storm("/k", 9, 27);
          const took = performance.now() - t0;
          assert.ok(st.every((s) => s === 200), st.join(","));
          assert.ok(took < TIMEOUT + 2_000, `took ${Math.round(took)} ms`);
          // The killed fill, then one taker.
          assert.equal(counts.get("/k"), 2);
          (await first).conn.close();
        },
      );
    } finally {
      releaseK();
      await ctl.stopAll(socket, dir, 5_000);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
