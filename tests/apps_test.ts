/**
 * Supervised applications: scalwsd starts Node, Python (uvicorn, gunicorn), Deno and plain
 * commands as worker pools on private Unix sockets or loopback ports, restarts crashed workers
 * without failing idempotent requests, rolls them on reload under load, shows them in
 * `/v1/apps`, `/v1/upstreams` and metrics, and leaves no worker behind, even after SIGKILL.
 */
import assert from "node:assert/strict";
import { adminFetch, request, scalwsYaml, startScalwsd, waitUntil } from "./_support/mod.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

const NODE = `
const http = require("http");
const server = http.createServer((req, res) => {
  if (req.url === "/slow") return setTimeout(() => res.end("slow " + process.pid), 300);
  res.setHeader("content-type", "text/plain");
  res.end((process.env.GREETING || "node") + " " + process.env.SCALWS_WORKER + " " + process.pid);
});
server.keepAliveTimeout = 60000;
server.listen(process.env.PORT, () => console.log("listening on " + process.env.PORT));
`;

const ASGI = `
async def app(scope, receive, send):
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"uvicorn " + scope["path"].encode()})
`;

const WSGI = `
def application(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"gunicorn " + environ["PATH_INFO"].encode()]
`;

const DENO = `
Deno.serve({ path: Deno.env.get("PORT"), onListen() {} }, (req) =>
  new Response("deno " + new URL(req.url).pathname));
`;

async function appDir(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-apps-src-" });
  await Deno.writeTextFile(`${dir}/server.js`, NODE);
  await Deno.writeTextFile(`${dir}/asgi_app.py`, ASGI);
  await Deno.writeTextFile(`${dir}/wsgi_app.py`, WSGI);
  await Deno.writeTextFile(`${dir}/main.ts`, DENO);
  return dir;
}

function app(name: string, runtime: Record<string, unknown>) {
  return { name, domains: [`${name}.test`], runtime };
}

async function getText(url: string, host: string): Promise<{ status: number; text: string }> {
  const r = await request(url, { headers: { host } });
  return { status: r.status, text: r.text };
}

interface AppsBody {
  apps: {
    name: string;
    tenant: string;
    app: string;
    type: string;
    desired_workers: number;
    restarts: number;
    states: Record<string, number>;
    workers: {
      id: number;
      pid: number;
      state: string;
      restarts: number;
      in_flight: number;
      cpu_seconds: number;
    }[];
  }[];
}

async function apps(socket: string): Promise<AppsBody> {
  return await (await adminFetch(socket, "/v1/apps")).json();
}

function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

Deno.test("apps: node, uvicorn, gunicorn, deno and a {port} command each serve as a pool", async () => {
  const dir = await appDir();
  try {
    await using s = await startScalwsd(scalwsYaml({
      apps: [
        app("node", { type: "node", entry: "server.js", cwd: dir, workers: 2 }),
        app("uv", { type: "python", app: "asgi_app:app", cwd: dir }),
        app("gu", { type: "python", app: "wsgi_app:application", server: "gunicorn", cwd: dir }),
        app("dn", { type: "deno", entry: "main.ts", cwd: dir }),
        app("port", {
          type: "app",
          command: [
            "node",
            "-e",
            "require('http').createServer((q,r)=>r.end('port')).listen(+process.argv[1], '127.0.0.1')",
            "{port}",
          ],
        }),
      ],
    }));
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const r = await getText(s.url + "/", "node.test");
      assert.equal(r.status, 200);
      assert.match(r.text, /^node [01] \d+$/);
      seen.add(r.text.split(" ")[1]);
    }
    assert.deepEqual([...seen].sort(), ["0", "1"]);
    assert.equal((await getText(s.url + "/x", "uv.test")).text, "uvicorn /x");
    assert.equal((await getText(s.url + "/y", "gu.test")).text, "gunicorn /y");
    assert.equal((await getText(s.url + "/z", "dn.test")).text, "deno /z");
    assert.equal((await getText(s.url + "/", "port.test")).text, "port");

    const view = await apps(s.adminSocket);
    const node = view.apps.find((a) => a.app === "node")!;
    assert.equal(node.name, "t.node");
    assert.equal(node.type, "node");
    assert.equal(node.states.ready, 2);
    assert.equal(node.desired_workers, 2);
    assert.equal(node.workers.length, 2);
    for (const p of node.workers) {
      assert.equal(typeof p.in_flight, "number");
      assert.equal(typeof p.cpu_seconds, "number");
      assert.equal(p.state, "ready");
      assert.ok(alive(p.pid));
    }
    // The socket directory is private.
    const sock = (await (await adminFetch(s.adminSocket, "/v1/upstreams")).json()).upstreams
      .find((u: { name: string }) => u.name === "t.node");
    assert.ok(sock, "the app pool is listed in /v1/upstreams");
    const first = sock.members[0].address as string;
    assert.match(first, /^unix:/);
    const dirMode = (await Deno.stat(first.slice(5, first.lastIndexOf("/")))).mode! & 0o777;
    assert.equal(dirMode, 0o700);
    assert.ok(s.logs.some((l) => l.includes('"app_output"') && l.includes("listening on")));

    const metrics = await (await adminFetch(s.adminSocket, "/metrics")).text();
    assert.match(metrics, /scalws_app_workers\{tenant="t",app="node",state="ready"\} 2/);
    assert.match(metrics, /scalws_app_restarts_total\{tenant="t",app="node"\} 0/);
    assert.match(metrics, /scalws_app_cpu_seconds_total\{tenant="t",app="node"\} [0-9.]+/);
    assert.match(metrics, /scalws_app_cpu_allotment\{tenant="t",app="node"\} [12]/);
    assert.match(
      metrics,
      /scalws_upstream_requests_total\{pool="t\.node",member="unix:[^"]+",class="2xx"\}/,
    );

    const ctl = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", MAIN, "ctl", "--socket", s.adminSocket, "apps"],
      stdout: "piped",
    }).output();
    const text = new TextDecoder().decode(ctl.stdout);
    assert.match(text, /app t\/node {2}type node {2}workers 2 {2}restarts 0/);
    assert.match(text, new RegExp(`\\b${node.workers[0].pid}\\s+ready\\b`));

    const pids = node.workers.map((p) => p.pid);
    await s.close();
    for (const pid of pids) assert.equal(alive(pid), false, `worker ${pid} still runs`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** `n` requests over `c` concurrent loops; returns the failures (non-200s and errors). */
async function load(
  url: string,
  host: string,
  n: number,
  c: number,
  during?: (done: number) => Promise<void> | void,
): Promise<string[]> {
  const failures: string[] = [];
  let next = 0;
  let done = 0;
  let hook: Promise<void> | undefined;
  await Promise.all(Array.from({ length: c }, async () => {
    while (next < n) {
      next++;
      try {
        const r = await getText(url, host);
        if (r.status !== 200) failures.push(`${r.status} ${r.text}`);
      } catch (err) {
        failures.push(String(err));
      }
      done++;
      if (during !== undefined && hook === undefined && done >= n / 3) {
        hook = Promise.resolve(during(done));
      }
    }
  }));
  await hook;
  return failures;
}

Deno.test("apps: a worker killed under load fails no GET and comes back after a backoff", async () => {
  const dir = await appDir();
  try {
    await using s = await startScalwsd(scalwsYaml({
      apps: [app("node", { type: "node", entry: "server.js", cwd: dir, workers: 2 })],
    }));
    const before = (await apps(s.adminSocket)).apps[0].workers;
    const victim = before[0].pid;
    const failures = await load(
      s.url + "/",
      "node.test",
      300,
      6,
      () => Deno.kill(victim, "SIGKILL"),
    );
    assert.deepEqual(failures, []);
    const back = await waitUntil(async () => {
      const a = (await apps(s.adminSocket)).apps[0];
      return a.states.ready === 2 && a.restarts === 1 ? a : false;
    }, { what: "the killed worker back and Ready", timeoutMs: 8000 });
    assert.ok(!back.workers.some((p) => p.pid === victim));
    assert.equal(back.workers.find((p) => p.id === 0)?.restarts, 1);
    assert.ok(s.logs.some((l) => l.includes("app_worker_exited")));
    const metrics = await (await adminFetch(s.adminSocket, "/metrics")).text();
    assert.match(metrics, /scalws_app_restarts_total\{tenant="t",app="node"\} 1/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("apps: a reload rolls changed workers under load; an unchanged app keeps its processes", async () => {
  const dir = await appDir();
  try {
    const yaml = (greeting: string) =>
      scalwsYaml({
        apps: [
          app("node", {
            type: "node",
            entry: "server.js",
            cwd: dir,
            workers: 2,
            env: { GREETING: greeting },
            drain_timeout: "2s",
          }),
          app("same", { type: "node", entry: "server.js", cwd: dir }),
        ],
      });
    await using s = await startScalwsd(yaml("one"));
    const before = await apps(s.adminSocket);
    const samePids = before.apps.find((a) => a.app === "same")!.workers.map((p) => p.pid);
    const oldPids = before.apps.find((a) => a.app === "node")!.workers.map((p) => p.pid);
    await s.write(yaml("two"));
    const failures = await load(s.url + "/", "node.test", 400, 6, async () => {
      const r = await s.server.reload();
      assert.equal(r.ok, true);
    });
    assert.deepEqual(failures, []);
    await s.server.apps.settled();
    const after = await apps(s.adminSocket);
    const node = after.apps.find((a) => a.app === "node")!;
    assert.equal(node.states.ready, 2);
    assert.equal(node.workers.length, 2);
    for (const p of node.workers) assert.ok(!oldPids.includes(p.pid));
    for (const pid of oldPids) assert.equal(alive(pid), false);
    assert.match((await getText(s.url + "/", "node.test")).text, /^two /);
    assert.deepEqual(
      after.apps.find((a) => a.app === "same")!.workers.map((p) => p.pid),
      samePids,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("apps: a worker that keeps crashing is given up with an alert; the app serves with the rest", async () => {
  const dir = await appDir();
  try {
    // Worker 1 exits at once, every time; worker 0 serves.
    await Deno.writeTextFile(
      `${dir}/flaky.js`,
      `if (process.env.SCALWS_WORKER === "1") process.exit(3);\n` + NODE,
    );
    await using s = await startScalwsd(scalwsYaml({
      apps: [app("node", {
        type: "node",
        entry: "flaky.js",
        cwd: dir,
        workers: 2,
        max_restarts: 1,
        restart_window: "1m",
        ready_timeout: "5s",
      })],
    }));
    await waitUntil(() => s.logs.some((l) => l.includes("app_worker_given_up")), {
      what: "the alert",
      timeoutMs: 8000,
    });
    const alert = JSON.parse(s.logs.find((l) => l.includes("app_worker_given_up"))!);
    assert.equal(alert.level, "error");
    assert.equal(alert.alert, true);
    assert.equal(alert.worker, 1);
    const a = (await apps(s.adminSocket)).apps[0];
    assert.equal(a.states.failed, 1);
    assert.equal(a.states.ready, 1);
    for (let i = 0; i < 4; i++) {
      assert.match((await getText(s.url + "/", "node.test")).text, /^node 0 /);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("apps: SIGKILL to scalwsd leaves no worker behind; SIGTERM stops them", async () => {
  const dir = await appDir();
  try {
    for (const sig of ["SIGKILL", "SIGTERM"] as const) {
      const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const port = (l.addr as Deno.NetAddr).port;
      l.close();
      const cfg = `${dir}/scalws-${sig}.yaml`;
      await Deno.writeTextFile(
        cfg,
        scalwsYaml({
          server: {
            listeners: [{ name: "http", address: `127.0.0.1:${port}` }],
            admin: { socket: `${dir}/admin-${sig}.sock` },
            access_log: "off",
          },
          apps: [app("node", { type: "node", entry: "server.js", cwd: dir, workers: 2 })],
        }),
      );
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-all", MAIN, "run", "--config", cfg],
        stdout: "null",
        stderr: "null",
      }).spawn();
      try {
        const view = await waitUntil(async () => {
          const a = (await apps(`${dir}/admin-${sig}.sock`)).apps[0];
          return a.states.ready === 2 ? a : false;
        }, { what: "two Ready workers", timeoutMs: 15_000 });
        const pids = view.workers.map((p) => p.pid);
        assert.ok(pids.every(alive));
        child.kill(sig);
        await child.status;
        await waitUntil(() => pids.every((p) => !alive(p)), {
          what: `the workers gone after ${sig}`,
          timeoutMs: 8000,
        });
      } finally {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
        await child.status;
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("apps: a reload that adds a route's app serves it at once; removing it stops its workers", async () => {
  const dir = await appDir();
  try {
    const base = (routes: unknown[]) =>
      scalwsYaml({
        apps: [{
          name: "site",
          domains: ["site.test"],
          runtime: { type: "respond", body: "home" },
          routes,
        }],
      });
    await using s = await startScalwsd(base([]));
    await s.write(base([{
      path: "/api",
      runtime: { type: "node", entry: "server.js", cwd: dir, env: { GREETING: "api" } },
    }]));
    assert.equal((await s.server.reload()).ok, true);
    const r = await getText(s.url + "/api/x", "site.test");
    assert.equal(r.status, 200);
    assert.match(r.text, /^api 0 \d+$/);
    const view = (await apps(s.adminSocket)).apps;
    assert.deepEqual(view.map((a) => a.name), ["t.site.routes[0]"]);
    const pid = view[0].workers[0].pid;
    await s.write(base([]));
    assert.equal((await s.server.reload()).ok, true);
    assert.deepEqual((await apps(s.adminSocket)).apps, []);
    await waitUntil(() => !alive(pid), { what: "the removed app's worker gone", timeoutMs: 8000 });
    assert.equal((await getText(s.url + "/api/x", "site.test")).text, "home");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
