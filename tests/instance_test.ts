/**
 * One instance as the controller runs it (`scalwsd run --instance-id ...`), as a real process:
 * prepared but not listening until SIGUSR2, readiness with the generation number, and the
 * SIGTERM drain (listeners first, `Connection: close`, in-flight requests finish, a deadline).
 */
import assert from "node:assert/strict";
import {
  app,
  members,
  proxy,
  respond,
  scalwsYaml,
  sleep,
  tempDir,
  waitUntil,
} from "./_support/mod.ts";
import { freePort } from "./_support/ports.ts";
import { startFakeDns } from "../src/discovery/_dns_test_server.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** One keep-alive GET (no `Connection: close` from the client) with any Host header. */
async function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; headers: Headers }> {
  const u = new URL(url);
  using conn = await Deno.connect({ hostname: u.hostname, port: Number(u.port) });
  let head = `GET ${u.pathname} HTTP/1.1\r\nhost: ${headers.host ?? u.host}\r\n\r\n`;
  await conn.write(new TextEncoder().encode(head));
  const buf = new Uint8Array(65536);
  let n = 0;
  for (;;) {
    const r = await conn.read(buf.subarray(n));
    if (r === null) throw new Error("connection closed before the whole response");
    n += r;
    const text = new TextDecoder().decode(buf.subarray(0, n));
    const end = text.indexOf("\r\n\r\n");
    if (end < 0) continue;
    head = text.slice(0, end);
    const h = new Headers();
    for (const line of head.split("\r\n").slice(1)) {
      const c = line.indexOf(":");
      h.append(line.slice(0, c).trim(), line.slice(c + 1).trim());
    }
    const len = Number(h.get("content-length") ?? "0");
    if (text.length - end - 4 < len) continue;
    return {
      status: Number(head.split(" ")[1]),
      text: text.slice(end + 4, end + 4 + len),
      headers: h,
    };
  }
}

async function refused(port: number): Promise<boolean> {
  try {
    (await Deno.connect({ hostname: "127.0.0.1", port })).close();
    return false;
  } catch (err) {
    return err instanceof Deno.errors.ConnectionRefused;
  }
}

/** A `scalwsd run` child process; disposing kills it (if still running) and reads its output. */
interface Instance extends AsyncDisposable {
  readonly port: number;
  readonly metrics: string;
  readonly socket: string;
  readonly child: Deno.ChildProcess;
  readonly output: () => Promise<string>;
}

/** A slow member: each request waits `delay` ms, or until `release()`. */
function slowMember(
  delay: number,
): { port: number; server: Deno.HttpServer; release(): Promise<void> } & AsyncDisposable {
  const timers = new Set<{ timer: ReturnType<typeof setTimeout>; done: () => void }>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    await new Promise<void>((done) => {
      const t = {
        timer: setTimeout(() => {
          timers.delete(t);
          done();
        }, delay),
        done,
      };
      timers.add(t);
    });
    return new Response("slow");
  });
  const release = async () => {
    for (const t of timers) {
      clearTimeout(t.timer);
      t.done();
    }
    timers.clear();
    await server.shutdown();
  };
  return { port: server.addr.port, server, release, [Symbol.asyncDispose]: release };
}

async function startInstance(
  dir: string,
  memberPort: number,
  drain: string | null,
  more: { server?: Record<string, unknown>; upstreams?: Record<string, unknown> } = {},
): Promise<Instance> {
  const port = freePort();
  const metrics = `127.0.0.1:${freePort()}`;
  const socket = `${dir}/web-0.sock`;
  await Deno.writeTextFile(
    `${dir}/scalws.yaml`,
    scalwsYaml({
      server: {
        listener_mode: "reuseport",
        listeners: [{ name: "http", address: `127.0.0.1:${port}` }],
        admin: undefined,
        access_log: "off",
        ...more.server,
      },
      upstreams: {
        api: { members: members(`127.0.0.1:${memberPort}`), members_from: "api" },
        ...more.upstreams,
      },
      apps: [app(respond("hello"), {
        domains: ["example.test"],
        routes: [{ path: "/slow", runtime: proxy("api", { response_timeout: "30s" }) }],
      })],
    }),
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      "--unstable-net",
      MAIN,
      "run",
      "--config",
      `${dir}/scalws.yaml`,
      "--instance-id",
      "web-0",
      "--generation",
      "5",
      "--cpus",
      "0",
      "--admin-socket",
      socket,
      "--metrics-address",
      metrics,
      ...(drain === null ? [] : ["--drain-timeout", drain]),
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const text = new Response(child.stderr).text();
  return {
    port,
    metrics,
    socket,
    child,
    output: () => text,
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGKILL");
      } catch { /* exited */ }
      await child.status;
      await text;
    },
  };
}

async function readyz(metrics: string): Promise<unknown> {
  return JSON.parse((await get(`http://${metrics}/readyz`)).text);
}

/**
 * The /readyz answer once the instance is past warming (answered while the generation is
 * prepared, a while on a loaded machine), else undefined.
 */
async function pastWarming(metrics: string): Promise<unknown> {
  const r = await readyz(metrics) as { state: string };
  return r.state === "warming" ? undefined : r;
}

Deno.test("instance: ready but not listening until SIGUSR2, then active; PUT of members answers 501", async () => {
  await using dir = await tempDir("scalwsd-inst-");
  await using member = slowMember(0);
  await using inst = await startInstance(dir.path, member.port, "5s");
  assert.deepEqual(
    await waitUntil(() => pastWarming(inst.metrics), {
      what: "readiness",
      timeoutMs: 10_000,
      intervalMs: 30,
    }),
    {
      generation: 5,
      state: "ready",
    },
  );
  assert.equal(await refused(inst.port), true);
  Deno.kill(inst.child.pid, "SIGUSR2");
  await waitUntil(
    async () => ((await readyz(inst.metrics)) as { state: string }).state === "active" || undefined,
    { what: "active", timeoutMs: 10_000, intervalMs: 30 },
  );
  const r = await get(`http://127.0.0.1:${inst.port}/`, { host: "example.test" });
  assert.deepEqual([r.status, r.text], [200, "hello"]);
  const metrics = (await get(`http://${inst.metrics}/metrics`)).text;
  assert.match(metrics, /^process_cpu_seconds_total \d/m);
  assert.match(metrics, /^scalws_event_loop_lag_p99_seconds \d/m);
  assert.match(metrics, /^scalws_inflight_requests 0$/m);
  assert.match(metrics, /^process_resident_memory_bytes [1-9]\d+$/m);
  {
    using client = Deno.createHttpClient({ proxy: { transport: "unix", path: inst.socket } });
    const put = await fetch("http://localhost/v1/upstreams/api", {
      client,
      method: "PUT",
      body: '{"members": []}',
    });
    assert.equal(put.status, 501);
    assert.deepEqual(await put.json(), {
      error: "run-time members are not supported with listener_mode: reuseport",
    });
  }
  Deno.kill(inst.child.pid, "SIGTERM");
  assert.equal((await inst.child.status).code, 0);
});

Deno.test("instance: /readyz answers warming (503, its generation) while the generation is prepared", async () => {
  await using dir = await tempDir("scalwsd-inst-");
  await using dns = startFakeDns();
  // The first resolution of the dns pool is part of preparing: held until warming was seen.
  dns.set("api.test", "A", { drop: true });
  await using inst = await startInstance(dir.path, 9, "5s", {
    server: { resolver: `127.0.0.1:${dns.port}` },
    upstreams: {
      dyn: { members_from: "dns", dns: { name: "api.test", type: "A", port: 9 } },
    },
  });
  const probe = async () => {
    const r = await get(`http://${inst.metrics}/readyz`);
    return { status: r.status, body: JSON.parse(r.text) };
  };
  const first = await waitUntil(() => probe().catch(() => undefined), {
    what: "the metrics listener",
    timeoutMs: 10_000,
    intervalMs: 20,
  });
  assert.deepEqual(first, { status: 503, body: { generation: 5, state: "warming" } });
  assert.equal((await get(`http://${inst.metrics}/livez`)).status, 200);
  dns.set("api.test", "A", {
    records: [{ name: "api.test", type: 1, ttl: 30, address: "127.0.0.1" }],
  });
  assert.deepEqual(
    await waitUntil(async () => {
      const r = await probe();
      return r.body.state === "warming" ? undefined : r;
    }, { what: "ready", timeoutMs: 10_000, intervalMs: 30 }),
    { status: 200, body: { generation: 5, state: "ready" } },
  );
  assert.equal(await refused(inst.port), true);
});

Deno.test("instance: SIGTERM closes the listener first, finishes in-flight requests with Connection: close", async () => {
  await using dir = await tempDir("scalwsd-inst-");
  await using member = slowMember(700);
  await using inst = await startInstance(dir.path, member.port, "5s");
  await waitUntil(() => pastWarming(inst.metrics), {
    what: "readiness",
    timeoutMs: 10_000,
    intervalMs: 30,
  });
  Deno.kill(inst.child.pid, "SIGUSR2");
  await waitUntil(async () => (await refused(inst.port)) ? undefined : true, {
    what: "listening",
    timeoutMs: 10_000,
    intervalMs: 30,
  });
  const slow = get(`http://127.0.0.1:${inst.port}/slow`, { host: "example.test" });
  await sleep(200);
  Deno.kill(inst.child.pid, "SIGTERM");
  await waitUntil(async () => (await refused(inst.port)) || undefined, {
    what: "the listener to close",
    timeoutMs: 2_000,
    intervalMs: 30,
  });
  const r = await slow;
  assert.deepEqual([r.status, r.text, r.headers.get("connection")], [200, "slow", "close"]);
  assert.equal((await inst.child.status).code, 0);
  const log = await inst.output();
  assert.match(log, /"event":"draining","signal":"SIGTERM","drain_timeout_ms":5000/);
  assert.match(log, /"event":"stopped"/);
});

Deno.test("instance: a drain that outlives --drain-timeout exits with status 3", async () => {
  await using dir = await tempDir("scalwsd-inst-");
  await using member = slowMember(3_000);
  await using inst = await startInstance(dir.path, member.port, "300ms");
  await waitUntil(() => pastWarming(inst.metrics), {
    what: "readiness",
    timeoutMs: 10_000,
    intervalMs: 30,
  });
  Deno.kill(inst.child.pid, "SIGUSR2");
  await waitUntil(async () => (await refused(inst.port)) ? undefined : true, {
    what: "listening",
    timeoutMs: 10_000,
    intervalMs: 30,
  });
  const slow = get(`http://127.0.0.1:${inst.port}/slow`, { host: "example.test" }).catch((e) => e);
  await sleep(200);
  const t0 = Date.now();
  Deno.kill(inst.child.pid, "SIGTERM");
  assert.equal((await inst.child.status).code, 3);
  const took = Date.now() - t0;
  assert.ok(took >= 300 && took < 2_500, `exited after ${took} ms`);
  assert.ok((await slow) instanceof Error);
  assert.match(
    await inst.output(),
    /"event":"drain_timeout","drain_timeout_ms":300,"inflight":1/,
  );
});

Deno.test("instance: without --drain-timeout the drain deadline is server.drain_timeout", async () => {
  await using dir = await tempDir("scalwsd-inst-");
  await using member = slowMember(3_000);
  await using inst = await startInstance(dir.path, member.port, null, {
    server: { drain_timeout: "300ms" },
  });
  await waitUntil(() => pastWarming(inst.metrics), {
    what: "readiness",
    timeoutMs: 10_000,
    intervalMs: 30,
  });
  Deno.kill(inst.child.pid, "SIGUSR2");
  await waitUntil(async () => (await refused(inst.port)) ? undefined : true, {
    what: "listening",
    timeoutMs: 10_000,
    intervalMs: 30,
  });
  const slow = get(`http://127.0.0.1:${inst.port}/slow`, { host: "example.test" }).catch((e) => e);
  await sleep(200);
  const t0 = Date.now();
  Deno.kill(inst.child.pid, "SIGTERM");
  assert.equal((await inst.child.status).code, 3);
  const took = Date.now() - t0;
  assert.ok(took >= 300 && took < 2_500, `exited after ${took} ms`);
  assert.ok((await slow) instanceof Error);
  assert.match(
    await inst.output(),
    /"event":"drain_timeout","drain_timeout_ms":300,"inflight":1/,
  );
});
