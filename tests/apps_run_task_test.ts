/**
 * Supervised applications under `scalwsd run` started as `deno task run` starts it (explicit
 * permissions, no `--allow-all`, which Deno wants for `/proc`): the workers' CPU still shows in
 * `/v1/apps` and `scalws_app_cpu_seconds_total`, and a start that fails (a listener's address
 * taken) stops the workers it started and leaves no private socket directory behind.
 */
import assert from "node:assert/strict";
import { adminFetch, app, scalwsYaml, waitUntil } from "./_support/mod.ts";
import { startScalwsdProcess } from "./_support/scalwsd_process.ts";
import { MAIN, RUN_FLAGS } from "./_support/controller.ts";

/**
 * A worker that spends 300 ms of CPU before it listens on its socket: measured by its own CPU
 * time, not the clock (on a loaded machine 300 ms of wall time held under 0.1 s of CPU).
 */
const BURN_THEN_LISTEN = [
  "node",
  "-e",
  "const cpu=()=>{const u=process.cpuUsage();return u.user+u.system};while(cpu()<300000);" +
  "require('http').createServer((q,r)=>r.end('ok')).listen(process.argv[1])",
  "{socket}",
];

Deno.test("apps: worker CPU is read from /proc without --allow-all (the run task's permissions)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-apps-cpu-" });
  try {
    const socket = `${dir}/admin.sock`;
    await using p = await startScalwsdProcess(scalwsYaml({
      server: { admin: { socket } },
      apps: [app({ type: "app", command: BURN_THEN_LISTEN })],
    }));
    const res = await (await adminFetch(socket, "/v1/apps")).json();
    const worker = res.apps[0].workers[0];
    assert.equal(worker.state, "ready");
    assert.ok(worker.cpu_seconds >= 0.25, `cpu_seconds ${worker.cpu_seconds} (pid ${worker.pid})`);
    const metrics = await (await adminFetch(socket, "/metrics")).text();
    const m = metrics.match(/scalws_app_cpu_seconds_total\{tenant="t",app="a"\} ([0-9.]+)/);
    assert.ok(m !== null && Number(m[1]) >= 0.25, `metric: ${m?.[0]}`);
    assert.ok(p.pid > 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("apps: a start that cannot listen stops its workers and removes their socket directory", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "scalwsd-apps-tmp-" });
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = (taken.addr as Deno.NetAddr).port;
    await Deno.writeTextFile(
      `${tmp}/scalws.yaml`,
      scalwsYaml({
        server: { listeners: [{ name: "http", address: `127.0.0.1:${port}` }], admin: undefined },
        apps: [app({ type: "app", command: BURN_THEN_LISTEN })],
      }),
    );
    // TMPDIR: the application's private directory is made in the test's own directory.
    const out = await new Deno.Command(Deno.execPath(), {
      args: [...RUN_FLAGS, MAIN, "run", "--config", `${tmp}/scalws.yaml`],
      env: { TMPDIR: tmp },
      stdout: "null",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, err);
    assert.match(err, /cannot listen/);
    const started = err.split("\n").filter((l) => l.includes('"app_worker_started"'));
    assert.equal(started.length, 1, err);
    const left = [...Deno.readDirSync(tmp)].map((e) => e.name).filter((n) =>
      n.startsWith("scalwsd-app-")
    );
    assert.deepEqual(left, [], "no private directory left");
    await waitUntil(() => !alive(JSON.parse(started[0]).pid), {
      what: "the worker's wrapper to exit",
      timeoutMs: 3000,
    });
  } finally {
    taken.close();
    await Deno.remove(tmp, { recursive: true });
  }
});

function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}
