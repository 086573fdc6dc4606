/**
 * One member request per URL per host under the real controller: 3 instances on SO_REUSEPORT
 * sharing one disk tier, started once. 300 requests for one cacheable URL over 30 new
 * connections cost the member one request; an instance killed while it holds a fill is taken
 * over by the others within the route's `response_timeout`; a URL invalidated through one
 * instance is served by none from its memory afterwards (one refill for the host); a purge
 * through `scalwsd ctl --controller-socket` (the control socket's fan-out) removes the file too;
 * the controller restarted, its new instances answer 300 more from the files the old ones left,
 * none from the member.
 */
import assert from "node:assert/strict";
import { scalwsYaml, sleep, startMember, waitUntil } from "./_support/mod.ts";
import {
  ControllerProcess,
  freeRange,
  MAIN,
  RUN_FLAGS,
  type StatusJson,
  unixFetch,
} from "./_support/controller.ts";
import { RawConn } from "./_support/raw_conn.ts";
import { nameOf } from "../src/cache/disk_format.ts";

const exists = (p: string) => {
  try {
    Deno.statSync(p);
    return true;
  } catch {
    return false;
  }
};

/** Response timeout of the cached route: a dead holder's fill is taken over after it. */
const TIMEOUT = 1_000;

Deno.test({
  name:
    "cache under the controller: one member request per URL for 3 instances, past a killed filler, after an invalidation and across restarts",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "scalwsd-cachectl-" });
    const counts = new Map<string, number>();
    let holdK = true;
    /** `max-age` of the member's answers for /s (see the stale URL step). */
    let sMaxAge = 1;
    let releaseK!: () => void;
    const k = new Promise<void>((r) => releaseK = r);
    await using member = startMember("m", async (req) => {
      const path = new URL(req.url).pathname;
      if (req.method === "POST") return new Response("changed");
      if (path === "/s") {
        // Stale after a second at most; revalidated with its ETag.
        const conditional = req.headers.get("if-none-match") === '"s1"';
        counts.set(
          conditional ? "/s 304" : "/s",
          (counts.get(conditional ? "/s 304" : "/s") ?? 0) + 1,
        );
        const headers = { "cache-control": `max-age=${sMaxAge}`, etag: '"s1"' };
        if (conditional) await sleep(300);
        return conditional
          ? new Response(null, { status: 304, headers })
          : new Response("/s body", { headers });
      }
      const n = (counts.get(path) ?? 0) + 1;
      counts.set(path, n);
      if (path === "/k" && holdK) {
        holdK = false;
        await k; // the first fill of /k never ends: its instance is killed meanwhile
      } else await sleep(300);
      return new Response(`${path} #${n}`, { headers: { "cache-control": "max-age=600" } });
    });
    const port = freeRange(1);
    const metricsBase = freeRange(4);
    const config = `${dir}/scalws.yaml`;
    const yaml = (mode: "reuseport", address: string) =>
      scalwsYaml({
        server: {
          listener_mode: mode,
          listeners: [{ name: "http", address }],
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
      });
    await Deno.writeTextFile(config, yaml("reuseport", `127.0.0.1:${port}`));
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
start_timeout: 60s
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
      }, { what: "3 active instances", timeoutMs: 60_000, intervalMs: 50 });

    /** `n` requests for `path` over `conns` new keep-alive connections; every answer. */
    const storm = async (path: string, conns: number, n: number, to = port) => {
      const answers: { status: number; body: string }[] = [];
      await Promise.all(Array.from({ length: conns }, async () => {
        await using c = await RawConn.open(to);
        for (let i = 0; i < n / conns; i++) {
          await c.write(`GET ${path} HTTP/1.1\r\nhost: a.test\r\n\r\n`);
          const r = await c.response(5_000);
          answers.push({ status: r?.status ?? 0, body: r?.body ?? "" });
        }
      }));
      return answers;
    };

    let ctl = new ControllerProcess(ctlFile);
    try {
      await active();

      await t.step(
        "300 requests over 30 connections to 3 instances: one member request",
        async () => {
          const st = await storm("/one", 30, 300);
          assert.equal(st.length, 300);
          assert.ok(st.every((a) => a.status === 200 && a.body === "/one #1"));
          assert.equal(counts.get("/one"), 1);
        },
      );

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
          assert.ok(st.every((a) => a.status === 200), st.map((a) => a.status).join(","));
          assert.ok(took < TIMEOUT + 2_000, `took ${Math.round(took)} ms`);
          // The killed fill, then one taker.
          assert.equal(counts.get("/k"), 2);
          (await first).conn.close();
        },
      );

      await t.step(
        "a URL invalidated through one instance: no instance serves its memory copy, one refill",
        async () => {
          // Every instance holds /one in memory now (30 connections spread over the three).
          await storm("/one", 30, 90);
          await using c = await RawConn.open(port);
          await c.write("POST /one HTTP/1.1\r\nhost: a.test\r\ncontent-length: 0\r\n\r\n");
          assert.equal((await c.response(5_000))?.status, 200);
          const st = await storm("/one", 30, 300);
          const old = st.filter((a) => a.body !== "/one #2").length;
          assert.equal(old, 0, `${old} answers were the invalidated /one`);
          assert.equal(counts.get("/one"), 2);
        },
      );

      await t.step(
        "a stale URL under 3 instances: one conditional request to the member",
        async () => {
          // Every instance holds /s in memory. `max-age=1` against a `Date` in whole seconds
          // leaves an answer fresh for 0 to 1 s: on a loaded machine it may go stale, and be
          // fetched or revalidated again, within this first storm; what counts is the next one.
          const first = await storm("/s", 30, 90);
          assert.ok(first.every((a) => a.status === 200 && a.body === "/s body"));
          const full = counts.get("/s")!;
          const revalidated = counts.get("/s 304") ?? 0;
          // Stale everywhere: every copy was received before the storm ended, over a second ago.
          const stale = Date.now() + 1_100;
          await waitUntil(async () => {
            await using c = await RawConn.open(port);
            await c.write(
              "GET /s HTTP/1.1\r\nhost: a.test\r\ncache-control: only-if-cached\r\n\r\n",
            );
            const r = await c.response(2_000);
            // Stale: only-if-cached gets 504 (RFC 9111 5.2.1.7) without asking the member.
            return r?.status === 504 && Date.now() >= stale ? true : undefined;
          }, { what: "/s stale", timeoutMs: 5_000, intervalMs: 100 });
          // Revalidated, fresh for the rest of the step: any other request to the member for
          // /s is a revalidation that did not collapse onto the first.
          sMaxAge = 600;
          const st = await storm("/s", 30, 300);
          assert.ok(st.every((a) => a.status === 200 && a.body === "/s body"));
          assert.equal(counts.get("/s"), full, "fetched again instead of revalidated");
          assert.equal(counts.get("/s 304"), revalidated + 1, "conditional requests");
        },
      );

      const oneFile = `${dir}/cache/v1/${nameOf("http://a.test/one").slice(0, 2)}/${
        nameOf("http://a.test/one")
      }`;
      await t.step(
        "a purge through the control socket's fan-out (ctl): memory and disk, one refill",
        async () => {
          await storm("/one", 30, 90); // every instance holds /one in memory
          assert.ok(exists(oneFile), "the file of /one before the purge");
          const out = await new Deno.Command(Deno.execPath(), {
            args: [...RUN_FLAGS, MAIN, "ctl", "--controller-socket", socket, "cache", "purge"]
              .concat(["http://a.test/one"]),
            stdout: "piped",
            stderr: "piped",
          }).output();
          const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
          assert.equal(out.code, 0, text);
          assert.match(text, /^purged [1-9]\d* entr(y|ies) on every instance$/m);
          assert.equal(exists(oneFile), false, "the file of /one after the purge");
          const st = await storm("/one", 30, 300);
          assert.ok(st.every((a) => a.status === 200 && a.body === "/one #3"));
          assert.equal(counts.get("/one"), 3);
        },
      );

      await t.step(
        "the controller restarted: its instances answer from the files the old ones left",
        async () => {
          await ctl.stopAll(socket, dir, 5_000);
          ctl = new ControllerProcess(ctlFile);
          await active();
          const st = await storm("/one", 30, 300);
          assert.ok(st.every((a) => a.status === 200 && a.body === "/one #3"));
          assert.equal(counts.get("/one"), 3);
        },
      );
    } finally {
      releaseK();
      await ctl.stopAll(socket, dir, 5_000);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
