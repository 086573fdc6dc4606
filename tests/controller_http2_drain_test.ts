/**
 * HTTP/2 across a scale-in under the controller: 8 connections with 32 streams each in flight
 * (raw-frame clients, `_support/h2_raw.ts`) while 3 instances become 1. Draining instances send
 * GOAWAY; streams they accepted finish, streams past the GOAWAY's last stream id (or refused)
 * were never processed and are sent again on a new connection. No processed stream is lost.
 */
import assert from "node:assert/strict";
import { app, scalwsYaml, sleep, startMember, startPki, waitUntil } from "./_support/mod.ts";
import { httpsListener } from "./_support/yaml.ts";
import {
  alive,
  ControllerProcess,
  freeRange,
  type StatusJson,
  unixFetch,
} from "./_support/controller.ts";
import { H2Raw, REFUSED_STREAM, request } from "./_support/h2_raw.ts";

const CONNECTIONS = 8;
const STREAMS = 32;
/** The member's answer time: streams are in flight when the drain starts. */
const MEMBER_MS = 150;

/** What became of one attempt of a request. */
type Outcome = "ok" | "unprocessed" | "lost";

/**
 * One connection's share of the load: `STREAMS` workers sending requests one after another on
 * the slot's current connection; a connection told GOAWAY takes no new stream, and the next
 * request opens a new connection.
 */
class Slot {
  private conn: H2Raw | null = null;
  private opening: Promise<H2Raw> | null = null;
  private nextId = 1;
  readonly conns: H2Raw[] = [];

  constructor(private readonly connect: () => Promise<H2Raw>) {}

  /** A connection that has not been told GOAWAY, opened when needed. */
  private async usable(): Promise<H2Raw> {
    const c = this.conn;
    if (c !== null && c.goaways.length === 0 && !c.closed && !c.writeFailed) return c;
    this.opening ??= this.reconnect().then((n) => {
      this.conn = n;
      this.nextId = 1;
      this.conns.push(n);
      this.opening = null;
      return n;
    });
    return await this.opening;
  }

  /**
   * A new connection. One queued on a draining instance's listening socket is reset
   * (`tcp_migrate_req` is off): nothing was sent on it, so it is simply opened again.
   */
  private async reconnect(): Promise<H2Raw> {
    for (let i = 0;; i++) {
      try {
        return await this.connect();
      } catch (err) {
        if (i >= 4) throw err;
        await sleep(20);
      }
    }
  }

  /** Sends `path` once: answered, never processed (GOAWAY or REFUSED_STREAM), or lost. */
  async attempt(path: string): Promise<{ outcome: Outcome; body: string }> {
    const c = await this.usable();
    const id = this.nextId;
    this.nextId += 2;
    c.send(request(id, "a.test", path));
    const s = c.stream(id);
    const beyond = () => c.goaways.some((g) => id > g.lastStreamId);
    await c.until(() => s.ended || s.resetCode >= 0 || beyond(), 10_000);
    if (s.ended && s.status === 200) return { outcome: "ok", body: s.body };
    if (s.resetCode === REFUSED_STREAM || beyond()) return { outcome: "unprocessed", body: "" };
    return {
      outcome: "lost",
      body: `status ${s.status} reset ${s.resetCode} closed ${c.closed} goaways ${
        JSON.stringify(c.goaways)
      } id ${id} pings ${c.pings}`,
    };
  }

  close(): void {
    for (const c of this.conns) c.close();
  }
}

Deno.test({
  name:
    "controller: HTTP/2 streams across a scale-in 3 -> 1 finish or are retried unprocessed, none lost",
  sanitizeResources: false,
  async fn() {
    await using pki = await startPki();
    const cert = await pki.issue("a", ["a.test"]);
    const processed = new Set<string>();
    await using member = startMember("m", async (req) => {
      processed.add(new URL(req.url).pathname);
      await sleep(MEMBER_MS);
      return new Response("done");
    });
    const dir = await Deno.makeTempDir({ prefix: "scalwsd-ctl-h2-" });
    const port = freeRange(1);
    const config = `${dir}/scalws.yaml`;
    await Deno.writeTextFile(
      config,
      scalwsYaml({
        server: {
          listener_mode: "reuseport",
          listeners: [httpsListener(cert, `127.0.0.1:${port}`)],
          admin: undefined,
          access_log: "off",
        },
        apps: [app({ type: "proxy", upstream: `http://${member.address}` })],
      }),
    );
    const ctlFile = `${dir}/controller.yaml`;
    await Deno.writeTextFile(
      ctlFile,
      `state_dir: ${dir}/state
config: ${config}
instances: {min: 1, max: 3, initial: 3}
cpus: "0-1"
metrics_base: "127.0.0.1:${freeRange(6)}"
probe_interval: 100ms
evaluation_interval: 250ms
drain_timeout: 5s
kill_grace: 1s
start_timeout: 20s
autoscaling: off
`,
    );
    const socket = `${dir}/state/control.sock`;
    const pids = new Set<number>();
    const settled = (n: number) =>
      waitUntil(async () => {
        const s = (await unixFetch(socket, "/v1/status")).json as StatusJson;
        for (const i of s.instances) if (i.pid > 0) pids.add(i.pid);
        const running = s.instances.filter((i) => !["stopped", "failed"].includes(i.state));
        return s.controller.next_step === "idle" && running.length === n &&
          running.every((i) => i.state === "active" && i.wanted);
      }, { what: `${n} active instances`, timeoutMs: 30_000, intervalMs: 50 });

    const ctl = new ControllerProcess(ctlFile);
    const slots: Slot[] = [];
    try {
      await settled(3);
      const connect = () => H2Raw.connect({ port, ca: pki.ca, servername: "a.test" });
      for (let i = 0; i < CONNECTIONS; i++) slots.push(new Slot(connect));
      let running = true;
      let answered = 0;
      const failures: string[] = [];
      const retried: string[] = [];
      /** One worker: requests in turn, each sent again (new attempt id) while unprocessed. */
      const worker = async (slot: number, w: number) => {
        for (let n = 0; running; n++) {
          let done = false;
          for (let attempt = 0; attempt < 5 && !done; attempt++) {
            const path = `/r/${slot}/${w}/${n}/${attempt}`;
            let got;
            try {
              got = await slots[slot].attempt(path);
            } catch (err) {
              failures.push(`${path}: ${err}`);
              return;
            }
            if (got.outcome === "ok") {
              assert.equal(got.body, "done");
              answered++;
              done = true;
            } else if (got.outcome === "unprocessed") retried.push(path);
            else {
              failures.push(`${path}: ${got.body} processed ${processed.has(path)}`);
              return;
            }
          }
          if (!done) failures.push(`/r/${slot}/${w}/${n}: unprocessed five times`);
        }
      };
      const workers: Promise<void>[] = [];
      for (let s = 0; s < CONNECTIONS; s++) {
        for (let w = 0; w < STREAMS; w++) workers.push(worker(s, w));
      }
      await waitUntil(() => answered >= CONNECTIONS * STREAMS || failures.length > 0, {
        what: "a first round of answers",
        timeoutMs: 15_000,
        intervalMs: 20,
      });
      assert.equal(
        (await unixFetch(socket, "/v1/scale", {
          method: "POST",
          body: JSON.stringify({ instances: 1 }),
        })).status,
        200,
      );
      await settled(1);
      const after = answered;
      await waitUntil(() => answered >= after + CONNECTIONS * STREAMS || failures.length > 0, {
        what: "answers after the scale-in",
        timeoutMs: 15_000,
        intervalMs: 20,
      });
      running = false;
      await Promise.all(workers);

      if (failures.length > 0) {
        for (const w of ["web-1", "web-2"]) {
          console.log(w, await Deno.readTextFile(`${dir}/state/logs/${w}.log`));
        }
      }
      assert.deepEqual(failures, [], "streams lost or failed");
      const gone = slots.flatMap((s) => s.conns).filter((c) => c.goaways.length > 0);
      assert.ok(gone.length > 0, "no connection was told GOAWAY: the scale-in drained none");
      for (const c of gone) {
        // hyper's graceful GOAWAY, then (PING answered) the last stream it accepted.
        assert.deepEqual(c.goaways.map((g) => g.code), [0, 0]);
        assert.equal(c.goaways[0].lastStreamId, 2 ** 31 - 1);
      }
      // What was sent again had never reached the member; what the member served was answered.
      for (const path of retried) assert.ok(!processed.has(path), `${path} was processed`);
      assert.equal(processed.size, answered, "the member served requests whose answer was lost");
      console.log(
        `h2 drain: ${answered} answered, ${retried.length} sent again, ${gone.length} GOAWAYs`,
      );
    } finally {
      for (const s of slots) s.close();
      await ctl.stop("SIGKILL");
      for (const pid of pids) if (await alive(pid, dir)) Deno.kill(pid, "SIGKILL");
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
