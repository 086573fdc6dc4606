/**
 * Fault suite: steady, bounded load through a 3-member pool while one member misbehaves at a
 * time. Idempotent GETs (`retries: 1`) see no error except a body broken after its head; POSTs
 * are never received twice; ejection and return show in the metrics and `GET /v1/upstreams`
 * (a ManualClock runs the cooldown).
 */
import assert from "node:assert/strict";
import {
  adminFetch,
  app,
  disposableList,
  members as memberList,
  proxy,
  type Scalwsd,
  scalwsYaml,
  sleep,
  startScalwsd,
  waitUntil,
} from "./_support/mod.ts";
import { ManualClock } from "../src/base/clock.ts";
import { seeded as prng } from "../src/base/random.ts";

/** How the faulty member answers. */
type Mode = "ok" | "reset" | "silent" | "flaky_close" | "unavailable" | "truncate";

const enc = new TextEncoder();
const dec = new TextDecoder();
const HEAD_END = enc.encode("\r\n\r\n");
/** What `truncate` declares and what it sends before closing. */
const TRUNCATED_LENGTH = 100_000;
const TRUNCATED_SENT = 40_000;

function indexOf(buf: Uint8Array, needle: Uint8Array, from = 0): number {
  outer: for (let i = from; i + needle.length <= buf.length; i++) {
    for (let j = 0; j < needle.length; j++) if (buf[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** Buffered reads of HTTP/1.1 requests (Content-Length bodies only: what scalwsd sends here). */
class RequestReader {
  private buf: Uint8Array = new Uint8Array(0);
  constructor(private readonly conn: Deno.Conn) {}

  private async fill(size = 65536): Promise<boolean> {
    const chunk = new Uint8Array(size);
    const n = await this.conn.read(chunk);
    if (n === null) return false;
    const next = new Uint8Array(this.buf.length + n);
    next.set(this.buf);
    next.set(chunk.subarray(0, n), this.buf.length);
    this.buf = next;
    return true;
  }

  /** The next request's method and target, its body read; null at EOF. */
  async request(): Promise<{ method: string; target: string } | null> {
    let end: number;
    while ((end = indexOf(this.buf, HEAD_END)) < 0) if (!await this.fill()) return null;
    const head = dec.decode(this.buf.subarray(0, end));
    const [method, target] = head.split("\r\n")[0].split(" ");
    const cl = /\r\ncontent-length: *(\d+)/i.exec(head);
    const length = cl ? Number(cl[1]) : 0;
    while (this.buf.length < end + 4 + length) if (!await this.fill()) return null;
    this.buf = this.buf.slice(end + 4 + length);
    return { method, target };
  }

  /**
   * Reads a request head one byte at a time and stops before its last byte, so that closing
   * the socket with that byte unread makes the kernel send a reset rather than a FIN.
   */
  async headButOne(): Promise<{ method: string; target: string } | null> {
    const one = new Uint8Array(1);
    let text = dec.decode(this.buf);
    while (!text.includes("\r\n\r")) {
      const n = await this.conn.read(one);
      if (n === null) return null;
      text += String.fromCharCode(one[0]);
    }
    const [method, target] = text.split("\r\n")[0].split(" ");
    return { method, target };
  }

  /** Waits until the peer closes (a member that stopped answering). */
  async drain(): Promise<void> {
    while (await this.fill());
  }
}

/** A raw keep-alive member whose behaviour switches with `mode`; counts what it received. */
class FaultMember implements AsyncDisposable {
  mode: Mode = "ok";
  /** GET requests whose head was read. */
  gets = 0;
  /** POST ids (from the target `/post/ID`) by the number of times a head carried them. */
  readonly posts = new Map<string, number>();
  /** Connections the member closed on purpose. */
  closes = 0;
  /** Responses cut short in `truncate` mode. */
  broken = 0;
  readonly port: number;
  readonly address: string;
  private readonly listener: Deno.TcpListener;
  private readonly conns = new Set<Deno.Conn>();
  private readonly tasks = new Set<Promise<void>>();
  private readonly loop: Promise<void>;
  private killed = false;

  constructor(readonly name: string, private readonly rand: () => number, port = 0) {
    this.listener = Deno.listen({ hostname: "127.0.0.1", port });
    this.port = (this.listener.addr as Deno.NetAddr).port;
    this.address = `127.0.0.1:${this.port}`;
    this.loop = this.accept();
  }

  private async accept(): Promise<void> {
    try {
      for await (const conn of this.listener) {
        this.conns.add(conn);
        const t = this.serve(conn).catch(() => {}).finally(() => {
          this.conns.delete(conn);
          this.tasks.delete(t);
          try {
            conn.close();
          } catch { /* closed already */ }
        });
        this.tasks.add(t);
      }
    } catch { /* listener closed */ }
  }

  private count(req: { method: string; target: string }): void {
    if (req.method === "POST") {
      const id = req.target.slice("/post/".length);
      this.posts.set(id, (this.posts.get(id) ?? 0) + 1);
    } else this.gets++;
  }

  private async serve(conn: Deno.Conn): Promise<void> {
    const reader = new RequestReader(conn);
    for (;;) {
      // The mode is read once the request is in: an idle connection follows a later switch.
      const resetting = this.mode === "reset";
      const req = resetting ? await reader.headButOne() : await reader.request();
      if (req === null) return;
      const mode = resetting ? "reset" : this.mode;
      this.count(req);
      const body = req.method === "POST"
        ? `${this.name} ${req.target.slice("/post/".length)}`
        : this.name;
      switch (mode) {
        case "reset":
          this.closes++;
          conn.close();
          return;
        case "silent":
          await reader.drain();
          return;
        case "unavailable":
          await conn.write(
            enc.encode("HTTP/1.1 503 Service Unavailable\r\ncontent-length: 4\r\n\r\ndown"),
          );
          continue;
        case "truncate": {
          const head = `HTTP/1.1 200 OK\r\ncontent-length: ${TRUNCATED_LENGTH}\r\n\r\n`;
          await conn.write(enc.encode(head + "x".repeat(TRUNCATED_SENT)));
          this.broken++;
          conn.close();
          return;
        }
        default:
          await conn.write(
            enc.encode(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n${body}`),
          );
      }
      if (mode === "flaky_close" && this.rand() < 0.3) {
        // Like an idle timeout firing: the close races with scalwsd reusing the connection.
        await sleep(Math.floor(this.rand() * 4));
        this.closes++;
        conn.close();
        return;
      }
    }
  }

  /** Closes the listener and every connection: later connects are refused. */
  async kill(): Promise<void> {
    if (this.killed) return;
    this.killed = true;
    this.listener.close();
    await this.loop;
    for (const c of this.conns) {
      try {
        c.close();
      } catch { /* closed already */ }
    }
    await Promise.all([...this.tasks]);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.kill();
  }
}

/** What the client saw for one request. */
interface Outcome {
  method: "GET" | "POST";
  id: string;
  status: number;
  body: string;
  /** Set when the request or its body failed on the client's side. */
  error?: string;
}

/** Shared by the load loops: how many requests finished. */
interface Progress {
  done: number;
}

/**
 * `loops` keep-alive clients, each sending `perLoop` requests in turn (every fourth a POST
 * with a unique id); each request is bounded by a 5 s timeout.
 */
async function load(
  url: string,
  loops: number,
  perLoop: number,
  tag: string,
  progress: Progress,
): Promise<Outcome[]> {
  const out: Outcome[] = [];
  await Promise.all(Array.from({ length: loops }, async (_, l) => {
    using client = Deno.createHttpClient({});
    for (let i = 0; i < perLoop; i++) {
      const post = i % 4 === 3;
      const id = `${tag}-${l}-${i}`;
      const o: Outcome = { method: post ? "POST" : "GET", id, status: 0, body: "" };
      try {
        const res = await fetch(post ? `${url}/post/${id}` : `${url}/get`, {
          method: o.method,
          body: post ? id : undefined,
          client,
          signal: AbortSignal.timeout(5000),
        });
        o.status = res.status;
        try {
          o.body = await res.text();
        } catch (err) {
          o.error = `body: ${err}`;
        }
      } catch (err) {
        o.error = `request: ${err}`;
      }
      out.push(o);
      progress.done++;
    }
  }));
  return out;
}

/** Pool p of `members` (one retry, ejected after 3 failures for 10s) behind application a. */
function config(members: string[], responseTimeout: string): string {
  return scalwsYaml({
    server: { default_host: "a.test" },
    upstreams: {
      p: {
        members: memberList(...members),
        retries: 1,
        passive_health: { failures: 3, cooldown: "10s" },
      },
    },
    apps: [app(proxy("p", { response_timeout: responseTimeout }))],
  });
}

interface MemberState {
  address: string;
  state: string;
  failures: number;
  ejected_until: string | null;
}

async function memberState(s: Scalwsd, address: string): Promise<MemberState> {
  const all = await (await adminFetch(s.adminSocket, "/v1/upstreams")).json();
  const pool = all.upstreams.find((p: { name: string }) => p.name === "p");
  return pool.members.find((m: MemberState) => m.address === address);
}

/** Progress points (finished requests) at which the cooldown is made to end. */
const PROBATIONS = [120, 160, 200, 240];

async function metricValue(s: Scalwsd, series: string): Promise<number> {
  const text = await (await adminFetch(s.adminSocket, "/metrics")).text();
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  assert.ok(line, `no series ${series}`);
  return Number(line.slice(series.length + 1));
}

function requestCount(s: Scalwsd, address: string, cls: string): Promise<number> {
  return metricValue(
    s,
    `scalws_upstream_requests_total{pool="p",member="${address}",class="${cls}"}`,
  );
}

async function ejectedGauge(s: Scalwsd, address: string): Promise<string> {
  const text = await (await adminFetch(s.adminSocket, "/metrics")).text();
  const line = text.split("\n").find((l) =>
    l.startsWith(`scalws_upstream_member_ejected{pool="p",member="${address}"}`)
  );
  assert.ok(line, `no ejected series for ${address}`);
  return line.split(" ").pop()!;
}

/** The two well-behaved members' names and the faulty one's. */
const GOOD = ["good-a", "good-b"];
const ALL = new Set([...GOOD, "faulty"]);

/**
 * Every POST id was received at most once over all members; a POST answered 200 was received
 * exactly once and its answer names it; failed POSTs ended with one of `allowed`.
 */
function checkPosts(
  outcomes: Outcome[],
  members: FaultMember[],
  allowed: readonly string[],
): void {
  const received = new Map<string, number>();
  for (const m of members) {
    for (const [id, n] of m.posts) received.set(id, (received.get(id) ?? 0) + n);
  }
  for (const [id, n] of received) assert.equal(n, 1, `POST ${id} received ${n} times`);
  for (const o of outcomes.filter((o) => o.method === "POST")) {
    if (o.status === 200 && o.error === undefined) {
      assert.equal(
        received.get(o.id),
        1,
        `POST ${o.id} answered 200 but received ${received.get(o.id)}`,
      );
      assert.ok(ALL.has(o.body.split(" ")[0]) && o.body.endsWith(` ${o.id}`), o.body);
    } else {
      const kind = o.error === undefined
        ? String(o.status)
        : o.error.startsWith("body")
        ? "truncated"
        : "request";
      assert.ok(allowed.includes(kind), `POST ${o.id}: ${kind} ${o.error ?? o.body}`);
    }
  }
}

/** GETs: 200 from a member, except `truncated` ones when the fault allows them. */
function checkGets(outcomes: Outcome[], truncatedAllowed: boolean): number {
  let truncated = 0;
  for (const o of outcomes.filter((o) => o.method === "GET")) {
    if (truncatedAllowed && o.status === 200 && o.error?.startsWith("body")) {
      truncated++;
      continue;
    }
    assert.equal(o.error, undefined, `GET ${o.id}: ${o.error}`);
    assert.equal(o.status, 200, `GET ${o.id}: ${o.status} ${o.body}`);
    assert.ok(ALL.has(o.body), o.body);
  }
  return truncated;
}

interface Scenario {
  /** Turns the fault on (the third member starts well-behaved). */
  inject(faulty: FaultMember): Promise<void> | void;
  /** Turns it off again; may return a replacement member (a killed one restarts). */
  heal(faulty: FaultMember): Promise<FaultMember> | FaultMember;
  /** What a failed POST may end with besides success. */
  postFailures: readonly string[];
  /** GETs may end truncated (a body broken after its head). */
  truncatedGets?: boolean;
  /** The `class` label the faulty member's attempts count under; unset: count cut bodies. */
  failureClass?: "error" | "5xx";
  responseTimeout?: string;
}

/**
 * Runs 4 keep-alive loops x 80 requests, injects the fault after 60 of them, checks what the
 * client saw and what members received, that the faulty member is ejected (gauge 1, state
 * `ejected` until now + cooldown); then heals it, ends the cooldown, runs 4 x 20 more
 * requests and checks that it came back (`healthy`, gauge 0, serving again).
 */
async function runScenario(seed: number, sc: Scenario): Promise<void> {
  const rand = prng(seed);
  const good = GOOD.map((n) => new FaultMember(n, rand));
  let faulty = new FaultMember("faulty", rand);
  await using all = disposableList([...good, faulty]);
  const clock = new ManualClock();
  await using s = await startScalwsd(
    config(all.map((m) => m.address), sc.responseTimeout ?? "5s"),
    { clock },
  );
  const address = faulty.address;
  const progress: Progress = { done: 0 };
  const running = load(s.url, 4, 80, "a", progress);
  await waitUntil(() => progress.done >= 60, { what: "the first 60 requests", intervalMs: 2 });
  await sc.inject(faulty);
  // Cooldowns end during the load: probation, one failure, ejected again at once.
  for (const at of PROBATIONS) {
    await waitUntil(() => progress.done >= at, { what: `${at} requests`, intervalMs: 2 });
    clock.advance(10_001);
  }
  const outcomes = await running;
  assert.equal(outcomes.length, 320);

  const truncated = checkGets(outcomes, sc.truncatedGets === true);
  if (sc.truncatedGets) {
    // Each cut body is one request the faulty member answered, passed on and never retried.
    const posts = outcomes.filter((o) => o.method === "POST" && o.error?.startsWith("body"));
    assert.ok(truncated > 0);
    assert.equal(truncated + posts.length, faulty.broken);
  }
  checkPosts(outcomes, all, sc.postFailures);
  // Three failures to eject, then at least one per probation.
  const failed = sc.failureClass === undefined
    ? faulty.broken
    : await requestCount(s, address, sc.failureClass);
  assert.ok(failed >= 3 + PROBATIONS.length, `only ${failed} failed attempts`);
  assert.equal(await ejectedGauge(s, address), "1");
  let m = await memberState(s, address);
  assert.equal(m.state, "ejected");
  assert.equal(m.ejected_until, new Date(clock.now() + 10_000).toISOString());

  // Return: the member behaves again and the cooldown ends; probation, then one success.
  faulty = await sc.heal(faulty);
  if (!all.includes(faulty)) all.push(faulty);
  const before = faulty.gets;
  clock.advance(10_001);
  assert.equal((await memberState(s, address)).state, "probation");
  const after = await load(s.url, 4, 20, "b", { done: 0 });
  checkGets(after, false);
  checkPosts([...outcomes, ...after], all, sc.postFailures);
  for (const o of after) assert.equal(o.status, 200, `${o.method} ${o.id} after healing`);
  assert.ok(faulty.gets > before, "the healed member serves again");
  m = await memberState(s, address);
  assert.equal(m.state, "healthy");
  assert.equal(m.failures, 0);
  assert.equal(m.ejected_until, null);
  assert.equal(await ejectedGauge(s, address), "0");
}

Deno.test("faults: a killed member (connection refused) costs no GET and no POST twice", async () => {
  await runScenario(1, {
    inject: (f) => f.kill(),
    heal: (f) => new FaultMember("faulty", prng(2), f.port),
    // A POST written to a connection that died with the member is never sent again.
    postFailures: ["502"],
    failureClass: "error",
  });
});

Deno.test("faults: a member that resets every connection after reading the request", async () => {
  await runScenario(3, {
    inject: (f) => {
      f.mode = "reset";
    },
    heal: (f) => {
      f.mode = "ok";
      return f;
    },
    postFailures: ["502"],
    failureClass: "error",
  });
});

Deno.test("faults: a member that stops answering (response timeout)", async () => {
  await runScenario(4, {
    inject: (f) => {
      f.mode = "silent";
    },
    heal: (f) => {
      f.mode = "ok";
      return f;
    },
    postFailures: ["504"],
    failureClass: "error",
    responseTimeout: "300ms",
  });
});

Deno.test("faults: a member that returns 503 for a while", async () => {
  await runScenario(5, {
    inject: (f) => {
      f.mode = "unavailable";
    },
    heal: (f) => {
      f.mode = "ok";
      return f;
    },
    // The member's own answer reaches the client; a POST is not retried.
    postFailures: ["503"],
    failureClass: "5xx",
  });
});

Deno.test("faults: a member that sends a truncated body", async () => {
  await runScenario(6, {
    inject: (f) => {
      f.mode = "truncate";
    },
    heal: (f) => {
      f.mode = "ok";
      return f;
    },
    postFailures: ["truncated"],
    truncatedGets: true,
  });
});

Deno.test("faults: a member that closes keep-alive connections at random", async () => {
  const rand = prng(7);
  await using members = disposableList([...GOOD, "faulty"].map((n) => new FaultMember(n, rand)));
  members[2].mode = "flaky_close";
  await using s = await startScalwsd(config(members.map((m) => m.address), "5s"));
  const outcomes = await load(s.url, 4, 80, "a", { done: 0 });
  assert.ok(members[2].closes > 5, `only ${members[2].closes} closes`);
  assert.ok(members[2].gets > 0);
  checkGets(outcomes, false);
  // A POST written to a connection the member had just closed is never sent again.
  checkPosts(outcomes, members, ["502"]);
});
