/**
 * HTTP/2 abuse against a TLS listener of a scalwsd child process: raw-frame clients
 * (`_support/h2_raw.ts`) try rapid reset, a CONTINUATION flood, oversized header lists, more
 * concurrent streams than allowed and an idle connection, each while a well-behaved node:http2
 * client on the same listener keeps getting its answers. The abuser gets GOAWAY and is
 * disconnected, or its excess is refused; scalwsd's CPU time for each attack stays bounded.
 */
import assert from "node:assert/strict";
import http2 from "node:http2";
import {
  app,
  respond,
  scalwsYaml,
  sleep,
  startMember,
  startPki,
  waitUntil,
} from "./_support/mod.ts";
import { httpsListener } from "./_support/yaml.ts";
import { startScalwsdProcess } from "./_support/scalwsd_process.ts";
import { concat } from "./_support/bytes.ts";
import {
  COMPRESSION_ERROR,
  CONTINUATION,
  END_HEADERS,
  END_STREAM,
  ENHANCE_YOUR_CALM,
  frame,
  H2Raw,
  headerBlock,
  HEADERS,
  NO_ERROR,
  REFUSED_STREAM,
  request,
  requestBlock,
  reset,
  SETTINGS_MAX_CONCURRENT_STREAMS,
  SETTINGS_MAX_HEADER_LIST_SIZE,
} from "./_support/h2_raw.ts";
import { h2Session } from "./_support/tls_client.ts";
import { WATCH_AFTER } from "../src/server/reset_watch.ts";

/** Slow answers keep streams open: a third of a second each. */
const SLOW_MS = 300;

/** Requests one after another on one node:http2 session until stopped; every one must pass. */
class SteadyClient {
  ok = 0;
  readonly failures: string[] = [];
  private running = true;
  private readonly loop: Promise<void>;
  private readonly session: http2.ClientHttp2Session;

  constructor(port: number, ca: string) {
    this.session = h2Session(port, ca);
    this.session.on("error", (e) => this.failures.push(`session: ${e}`));
    this.loop = this.run();
  }

  private get(): Promise<string> {
    return new Promise((resolve, reject) => {
      const req = this.session.request({ ":path": "/" });
      let status = 0;
      let body = "";
      req.setEncoding("utf8");
      req.on("response", (h) => (status = Number(h[":status"])));
      req.on("data", (d: string) => (body += d));
      req.on("end", () => resolve(`${status} ${body}`));
      req.on("error", reject);
      // A stream closed without its end (reset, or cancelled below) settles too: no wait
      // outlives the test.
      req.on("close", () => reject(new Error(`stream closed without its end (${status})`)));
      req.setTimeout(5000, () => req.close(http2.constants.NGHTTP2_CANCEL));
      req.end();
    });
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        const got = await this.get();
        if (got === "200 ok") this.ok++;
        else this.failures.push(got);
      } catch (err) {
        this.failures.push(String(err));
        if (this.session.destroyed || this.session.closed) return;
      }
    }
  }

  /** Waits for `n` more successful requests (at most 5 s): the client is still served. */
  async more(n: number): Promise<void> {
    const want = this.ok + n;
    const end = Date.now() + 5000;
    while (this.ok < want && Date.now() < end && this.failures.length === 0) await sleep(5);
    assert.deepEqual(this.failures, [], "the well-behaved client failed");
    assert.ok(this.ok >= want, `the well-behaved client got ${this.ok} of ${want} answers`);
  }

  /** Stops; a request or a close still under way after 6 s destroys the session. */
  async [Symbol.asyncDispose](): Promise<void> {
    this.running = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((r) => (timer = setTimeout(r, 6000)));
    const closed = this.loop.then(() => new Promise<void>((r) => this.session.close(() => r())));
    await Promise.race([closed, late]);
    clearTimeout(timer);
    if (!this.session.destroyed) this.session.destroy();
  }
}

/** Sends `batch()` in rounds until the server closes (at most `rounds`). */
async function flood(c: H2Raw, rounds: number, batch: (round: number) => Uint8Array) {
  for (let r = 0; r < rounds && !c.closed && !c.writeFailed; r++) await c.send(batch(r));
}

Deno.test({
  name: "HTTP/2 abuse: hyper's limits and scalwsd's, GOAWAY for abusers, others keep being served",
  sanitizeResources: false,
  async fn(t) {
    await using pki = await startPki();
    const cert = await pki.issue("a", ["a.test"]);
    /** Requests for /hold the member keeps unanswered until `release`, or 10 s at most. */
    let held = 0;
    const holding = new Set<() => void>();
    const release = () => {
      for (const r of holding) r();
      holding.clear();
    };
    await using member = startMember("slow", async (req) => {
      if (new URL(req.url).pathname === "/hold") {
        held++;
        await new Promise<void>((r) => {
          const t = setTimeout(r, 10_000);
          holding.add(() => {
            clearTimeout(t);
            r();
          });
        });
        return new Response("held");
      }
      await sleep(SLOW_MS);
      return new Response("slow");
    });
    await using scalwsd = await startScalwsdProcess(scalwsYaml({
      server: {
        listeners: [httpsListener(cert)],
        admin: undefined,
        access_log: "off",
        // The steady client is never idle; the abusers get an answer first.
        limits: { max_header_size: "8KiB", idle_timeout: "1s" },
      },
      apps: [app(respond("ok"), {
        routes: ["/slow", "/hold"].map((path) => ({
          path,
          runtime: { type: "proxy", upstream: `http://${member.address}` },
        })),
      })],
    }));
    const port = scalwsd.port("https");
    const connect = () => H2Raw.connect({ port, ca: pki.ca, servername: "a.test" });
    await using steady = new SteadyClient(port, pki.ca);
    await steady.more(5);

    /** Runs `attack` and checks scalwsd's CPU time for it and that the steady client goes on. */
    const bounded = async (what: string, cpuLimitMs: number, attack: () => Promise<void>) => {
      const before = await scalwsd.cpuMs();
      await attack();
      const spent = (await scalwsd.cpuMs()) - before;
      assert.ok(spent < cpuLimitMs, `${what}: scalwsd used ${spent} ms of CPU`);
      await steady.more(5);
    };

    await t.step("rapid reset in bursts: hyper's GOAWAY ENHANCE_YOUR_CALM", async () => {
      await using c = await connect();
      await bounded("rapid reset in bursts", 1500, async () => {
        let id = 1;
        await flood(c, 100, () => {
          const parts = [];
          for (let k = 0; k < 100; k++, id += 2) parts.push(request(id, "a.test", "/"), reset(id));
          return concat(parts);
        });
        assert.ok(await c.closedWithin(3000), "the abuser was not disconnected");
      });
      assert.equal(c.goaways.length, 1);
      assert.equal(c.goaways[0].code, ENHANCE_YOUR_CALM);
      assert.equal(c.goaways[0].debug, "too_many_resets");
      // More than 20 streams reset before they were accepted end the connection.
      assert.ok(c.goaways[0].lastStreamId <= 2 * 200, `last ${c.goaways[0].lastStreamId}`);
    });

    await t.step(
      "CONTINUATION flood: hyper's GOAWAY ENHANCE_YOUR_CALM after 5 frames",
      async () => {
        await using c = await connect();
        await bounded("CONTINUATION flood", 1000, async () => {
          const filler = headerBlock([["x-a", "b"]]);
          await c.send(frame(HEADERS, END_STREAM, 1, requestBlock("a.test", "/")));
          await flood(c, 1000, () => concat(Array(100).fill(frame(CONTINUATION, 0, 1, filler))));
          assert.ok(await c.closedWithin(3000), "the abuser was not disconnected");
        });
        assert.deepEqual(
          c.goaways.map((g) => [g.code, g.debug, g.lastStreamId]),
          [[ENHANCE_YOUR_CALM, "too_many_continuations", 0]],
        );
        assert.equal(c.streams.size, 0, "no stream was answered");
      },
    );

    await t.step(
      "header lists: scalwsd's 431, hyper's 431 past 16 KiB, GOAWAY past that",
      async () => {
        await using c = await connect();
        await c.until(() => c.settings.size > 0, 3000);
        assert.equal(c.settings.get(SETTINGS_MAX_HEADER_LIST_SIZE), 16 * 1024);
        // Over `max_header_size` (8 KiB here) but under hyper's 16 KiB: scalwsd answers.
        const mid = requestBlock("a.test", "/", [["x-big", "a".repeat(10_000)]]);
        await c.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, mid));
        // Over 16 KiB, in a HEADERS and a CONTINUATION frame: hyper answers 431 itself.
        const big = requestBlock("a.test", "/", [["x-big", "a".repeat(20_000)]]);
        await c.send(concat([
          frame(HEADERS, END_STREAM, 3, big.subarray(0, 16_000)),
          frame(CONTINUATION, END_HEADERS, 3, big.subarray(16_000)),
        ]));
        await c.send(request(5, "a.test", "/"));
        await c.until(() => [1, 3, 5].every((id) => c.streams.get(id)?.ended), 3000);
        assert.deepEqual(
          [1, 3, 5].map((id) => [c.stream(id).status, c.stream(id).body]),
          [[431, "Request Header Fields Too Large\n"], [431, ""], [200, "ok"]],
        );
        assert.equal(c.closed, false, "a 431 keeps the connection");
        // A block still going on once it is known to be over the list size: GOAWAY. (Fields
        // of 100 bytes: the first frame alone decodes to more than 16 KiB; then a full frame.)
        const fields = Array.from({ length: 400 }, (_, i) => [`x-${i}`, "a".repeat(100)] as const);
        const huge = requestBlock("a.test", "/", fields);
        await c.send(concat([
          frame(HEADERS, END_STREAM, 7, huge.subarray(0, 16_000)),
          frame(CONTINUATION, 0, 7, huge.subarray(16_000, 16_000 + 16_384)),
          frame(CONTINUATION, END_HEADERS, 7, huge.subarray(16_000 + 16_384)),
        ]));
        assert.ok(await c.closedWithin(3000), "the abuser was not disconnected");
        assert.deepEqual(c.goaways.map((g) => g.code), [COMPRESSION_ERROR]);
        await steady.more(5);
      },
    );

    await t.step(
      "no stream below the 200 that SETTINGS announce is refused; past them hyper's REFUSED_STREAM",
      async () => {
        await using c = await connect();
        await c.until(() => c.settings.size > 0, 3000);
        assert.equal(c.settings.get(SETTINGS_MAX_CONCURRENT_STREAMS), 200);
        await bounded("streams past the limits", 1500, async () => {
          const parts = [];
          for (let id = 1; id <= 2 * 260; id += 2) parts.push(request(id, "a.test", "/slow"));
          await c.send(concat(parts));
          const settled = () => [...c.streams.values()].filter((s) => s.ended || s.resetCode >= 0);
          assert.ok(await c.until(() => settled().length === 260, 5000), `${settled().length}`);
        });
        const outcome = (id: number) => {
          const s = c.stream(id);
          return s.resetCode >= 0 ? `reset ${s.resetCode}` : `${s.status} ${s.body}`;
        };
        const seen = new Map<string, number[]>();
        for (let id = 1; id <= 2 * 260; id += 2) {
          const o = outcome(id);
          seen.set(o, [...(seen.get(o) ?? []), id]);
        }
        // Streams 1..399 (the first 200) are answered, past the 200th (id 401 on) hyper's
        // REFUSED_STREAM (fewer when the first answers are done before the last streams come).
        const ok = seen.get("200 slow") ?? [];
        const refused = seen.get(`reset ${REFUSED_STREAM}`) ?? [];
        assert.deepEqual(ok.slice(0, 200), Array.from({ length: 200 }, (_, i) => 2 * i + 1));
        assert.ok(refused.every((id) => id >= 401), `refused from ${refused[0]}`);
        assert.equal(ok.length + refused.length, 260, [...seen.keys()].join(", "));
        assert.equal(c.goaways.length, 0);
        assert.equal(c.closed, false);
        // Going on past the limits: refusals cost little, hyper keeps the connection open.
        let id = 2 * 260 + 1;
        await bounded("5,000 streams past the limits", 1500, async () => {
          await flood(c, 20, () => {
            const parts = [];
            for (let k = 0; k < 250; k++, id += 2) parts.push(request(id, "a.test", "/slow"));
            return concat(parts);
          });
          const last = c.stream(id - 2);
          assert.ok(await c.until(() => last.ended || last.resetCode >= 0, 5000));
        });
        assert.equal(c.closed, false);
      },
    );

    await t.step(
      "rapid reset, each stream accepted first: scalwsd's GOAWAY past 100 a second",
      async () => {
        // Each stream is reset once its request has reached the member, which holds it: accepted
        // by hyper, so hyper's own limit on resets before accepting stays out of it, and at work
        // in scalwsd when its reset comes, however slow the machine. (Paced by the clock, resets
        // of streams not yet accepted met hyper's limit first, and late ones came after the
        // answer: neither counts.) The resets wait WATCH_AFTER and more: scalwsd sees only those
        // after its reset watch first read the request's signal (Deno 2.9.6 does not report an
        // HTTP/2 reset that came before; a known gap, not what this step checks).
        const STREAMS = 150; // more than 100, fewer than the 200 SETTINGS allow at once
        await using c = await connect();
        try {
          await bounded("rapid reset of accepted streams", 2000, async () => {
            const ids = Array.from({ length: STREAMS }, (_, i) => 2 * i + 1);
            const before = held;
            await c.send(concat(ids.map((id) => request(id, "a.test", "/hold"))));
            await waitUntil(() => held - before === STREAMS || c.closed, {
              what: `the member to hold ${STREAMS} requests`,
              timeoutMs: 10_000,
            });
            assert.equal(held - before, STREAMS, "requests held by the member");
            assert.equal(c.goaways.length, 0, "GOAWAY before any reset");
            await sleep(WATCH_AFTER * 8);
            await c.send(concat(ids.map((id) => reset(id))));
            assert.ok(await c.closedWithin(3000), "the abuser was not disconnected");
          });
        } finally {
          release();
        }
        // hyper's graceful GOAWAY: the last stream id is 2^31-1 until the client answers a PING.
        assert.deepEqual(c.goaways[0], { lastStreamId: 2 ** 31 - 1, code: NO_ERROR, debug: "" });
        assert.ok(
          scalwsd.lines.some((l) => l.includes('"event":"http2_abuse"')),
          "no http2_abuse event logged",
        );
      },
    );

    await t.step(
      "rapid reset within WATCH_AFTER of each stream's start: the sampled streams count for all",
      async () => {
        // The same attack, reset as soon as the member holds the requests: before scalwsd's
        // reset watch reads any signal (Deno 2.9.6 never reports a reset that came before).
        // One stream in SAMPLE is listened to from its start and its early reset counts SAMPLE.
        const STREAMS = 160;
        await using c = await connect();
        try {
          await bounded("early rapid reset", 2000, async () => {
            const ids = Array.from({ length: STREAMS }, (_, i) => 2 * i + 1);
            const before = held;
            await c.send(concat(ids.map((id) => request(id, "a.test", "/hold"))));
            await waitUntil(() => held - before === STREAMS || c.closed, {
              what: `the member to hold ${STREAMS} requests`,
              timeoutMs: 10_000,
              intervalMs: 2,
            });
            assert.equal(c.goaways.length, 0, "GOAWAY before any reset");
            await c.send(concat(ids.map((id) => reset(id))));
            assert.ok(await c.closedWithin(3000), "the abuser was not disconnected");
          });
        } finally {
          release();
        }
        assert.deepEqual(c.goaways[0], { lastStreamId: 2 ** 31 - 1, code: NO_ERROR, debug: "" });
      },
    );

    await t.step("an idle connection gets GOAWAY and is closed, PING answered or not", async () => {
      for (const answerPings of [true, false]) {
        await using c = await H2Raw.connect({
          port,
          ca: pki.ca,
          servername: "a.test",
          answerPings,
        });
        await c.send(request(1, "a.test", "/"));
        assert.ok(await c.until(() => c.stream(1).ended, 3000));
        const start = Date.now();
        // `idle_timeout` is 1 s here; GOAWAY_GRACE (1 s) more when the PING is not answered.
        assert.ok(await c.closedWithin(4000), `answerPings ${answerPings}: still open`);
        const took = Date.now() - start;
        assert.ok(took >= 900, `closed after ${took} ms`);
        const last = answerPings
          ? [[2 ** 31 - 1, NO_ERROR], [1, NO_ERROR]]
          : [[2 ** 31 - 1, NO_ERROR]];
        assert.deepEqual(c.goaways.map((g) => [g.lastStreamId, g.code]), last);
        assert.equal(c.pings, 1);
      }
      await steady.more(5);
    });
  },
});
