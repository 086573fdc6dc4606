/**
 * SIGUSR1 and SIGHUP on a real `scalwsd run`: both reopen the access log (after `mv`, new lines
 * go to a new file with the old file's mode), SIGUSR1 never starts Deno's inspector on
 * 127.0.0.1:9229 and the process keeps serving. And the canary: plain Deno still starts the
 * inspector on SIGUSR1, whatever its listeners do (the reason for src/base/usr1.ts). `scalwsd
 * gateway` (as `ingress`, the same command runner) takes SIGUSR1 the same way.
 */
import assert from "node:assert/strict";
import { app, respond, scalwsYaml, sleep, waitUntil } from "./_support/mod.ts";
import { startScalwsdProcess } from "./_support/scalwsd_process.ts";
import { readProcFile } from "../src/controller/proc.ts";
import { MAIN, RUN_FLAGS } from "./_support/controller.ts";
import { fakeKubeApi, kubeconfigFor } from "./_support/kube_api.ts";
import { tempDir } from "./_support/temp_dir.ts";

const INSPECTOR_PORT = 9229;
const GW = "/apis/gateway.networking.k8s.io/v1";

/** Whether process `pid` holds a TCP socket listening on `port` (from /proc, exact per process). */
async function listensOn(pid: number, port: number): Promise<boolean> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", `find /proc/${pid}/fd -lname 'socket:*' -printf '%l\\n' 2>/dev/null`],
  }).output();
  const inodes = new Set(
    new TextDecoder().decode(out.stdout).split("\n").filter(Boolean).map((l) => l.slice(8, -1)),
  );
  const hex = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const text = (await readProcFile(table)) ?? "";
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address, state 0A = LISTEN, inode (field 10)
      if (f.length > 9 && f[1].endsWith(hex) && f[3] === "0A" && inodes.has(f[9])) return true;
    }
  }
  return false;
}

/** A connection attempt to 127.0.0.1:9229, bounded: true when something accepted it. */
async function inspectorAnswers(): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const attempt = Deno.connect({ hostname: "127.0.0.1", port: INSPECTOR_PORT }).then(
    (c) => (c.close(), true),
    () => false,
  );
  const r = await Promise.race([
    attempt,
    new Promise<boolean>((res) => timer = setTimeout(() => res(false), 1_000)),
  ]);
  clearTimeout(timer);
  return r;
}

async function fetchText(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

Deno.test({
  name:
    "signals: SIGUSR1 and SIGHUP reopen the access log with the old mode; SIGUSR1 starts no inspector",
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "scalwsd-signals-" });
    const log = `${dir}/access.log`;
    try {
      await using p = await startScalwsdProcess(scalwsYaml({
        server: { access_log: log, admin: undefined },
        apps: [app(respond("hello"), { domains: ["127.0.0.1"] })],
      }));
      const url = `http://127.0.0.1:${p.port("http")}`;
      const hits = (file: string, path: string) =>
        Deno.readTextFile(file).then((t) => t.split("\n").filter((l) => l.includes(`"${path}"`)));
      // The process was re-executed with SIGUSR1 blocked in every thread.
      const status = (await readProcFile(`/proc/${p.pid}/status`)) ?? "";
      const blocked = BigInt("0x" + (/SigBlk:\s*([0-9a-f]+)/.exec(status)?.[1] ?? "0"));
      assert.equal((blocked >> 9n) & 1n, 1n, `SIGUSR1 not blocked: ${status}`);
      // ...under its own name (ps, top, ss), not "exe" (from /proc/self/exe).
      const comm = ((await readProcFile(`/proc/${p.pid}/comm`)) ?? "").trim();
      assert.equal(comm, Deno.execPath().split("/").at(-1)!.slice(0, 15));

      assert.equal((await fetchText(`${url}/one`)).status, 200);
      await waitUntil(() => hits(log, "/one").then((l) => l.length === 1), { what: "/one logged" });
      Deno.chmodSync(log, 0o640);
      await Deno.rename(log, `${log}.1`);
      // Past Deno's 500 ms grace period, several times (one does not always start it: canary).
      await sleep(600);
      for (let i = 0; i < 4; i++) {
        Deno.kill(p.pid, "SIGUSR1");
        await waitUntil(() => p.lines.filter((l) => l.includes('"logs_reopened"')).length > i, {
          what: `logs_reopened after SIGUSR1 #${i + 1}`,
        });
      }
      await sleep(300);
      assert.equal(await listensOn(p.pid, INSPECTOR_PORT), false, "scalwsd listens on 9229");
      if (await inspectorAnswers()) {
        // Another process of this machine may hold the port; scalwsd must not (checked above).
        console.warn("127.0.0.1:9229 answers, but not scalwsd's socket");
      }
      assert.ok(!p.lines.some((l) => l.includes("Debugger listening")), p.lines.join("\n"));
      // A plain start and its requests log no warning of Deno's.
      assert.ok(!p.lines.some((l) => l.includes('"deno_warning"')), p.lines.join("\n"));
      assert.deepEqual(await fetchText(`${url}/two`), { status: 200, body: "hello" });
      await waitUntil(() => hits(log, "/two").then((l) => l.length === 1), {
        what: "/two in the new access.log",
      });
      assert.equal(Deno.statSync(log).mode! & 0o777, 0o640);
      assert.deepEqual(await hits(`${log}.1`, "/two"), []);
      assert.equal((await hits(`${log}.1`, "/one")).length, 1);

      // SIGHUP reloads and reopens too.
      await Deno.rename(log, `${log}.2`);
      Deno.kill(p.pid, "SIGHUP");
      await waitUntil(() => p.lines.some((l) => l.includes('"event":"reloaded"')), {
        what: "reloaded after SIGHUP",
      });
      assert.equal((await fetchText(`${url}/three`)).status, 200);
      await waitUntil(() => hits(log, "/three").then((l) => l.length === 1), {
        what: "/three in the access.log reopened on SIGHUP",
      });
      assert.equal(Deno.statSync(log).mode! & 0o777, 0o640);
      assert.deepEqual(await hits(`${log}.2`, "/three"), []);

      // A stray SIGUSR2 (no controller) is logged and ignored; SIGQUIT drains like SIGTERM.
      Deno.kill(p.pid, "SIGUSR2");
      await waitUntil(() => p.lines.some((l) => l.includes('"event":"signal_ignored"')), {
        what: "signal_ignored after SIGUSR2",
      });
      assert.equal((await fetchText(`${url}/four`)).status, 200);
      const st = await p.stop("SIGQUIT");
      assert.equal(st.code, 0, p.lines.join("\n"));
      assert.equal(st.signal, null);
      assert.ok(
        p.lines.some((l) => /"event":"draining".*"signal":"SIGQUIT"/.test(l)),
        p.lines.join("\n"),
      );
      assert.ok(p.lines.some((l) => l.includes('"event":"stopped"')), p.lines.join("\n"));
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "signals canary: plain Deno starts its inspector on SIGUSR1 despite a listener (remove src/base/usr1.ts's re-execution when this fails)",
  sanitizeResources: false,
  async fn() {
    const script = `Deno.addSignalListener("SIGUSR1", () => {});
console.error("up");
setTimeout(() => {}, 10000);`;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["eval", script],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    let text = "";
    const reading = (async () => {
      for await (const c of child.stderr.pipeThrough(new TextDecoderStream())) text += c;
    })();
    try {
      await waitUntil(() => text.includes("up"), { what: "the canary process up" });
      await sleep(700); // Deno's grace period is 500 ms
      // One signal does not always do it (seen: 1 in 3): several, until the inspector reports.
      // "Failed to start inspector server" when another process holds 9229: it tried, all the same.
      let started = false;
      for (let i = 0; i < 10 && !started; i++) {
        child.kill("SIGUSR1");
        await sleep(300);
        started = /Debugger listening on|Failed to start inspector server/.test(text);
      }
      assert.ok(
        started,
        `Deno ${Deno.version.deno} no longer starts its inspector on SIGUSR1 (denoland/deno ` +
          `pull request 35738 changed?): src/base/usr1.ts's re-execution with SIGUSR1 blocked ` +
          `may not be needed any more; its stderr: ${JSON.stringify(text)}`,
      );
    } finally {
      child.kill("SIGKILL");
      await child.status;
      await reading;
    }
  },
});

Deno.test({
  name:
    "signals: `scalwsd gateway` (a real process) blocks SIGUSR1 and drops the debug environment: no inspector, logs reopened; SIGHUP reloads",
  sanitizeResources: false,
  async fn() {
    const R = (path: string, namespaced = true) => ({ path, namespaced });
    const api = fakeKubeApi({
      gatewayClasses: R(`${GW}/gatewayclasses`, false),
      gateways: R(`${GW}/gateways`),
      httpRoutes: R(`${GW}/httproutes`),
      referenceGrants: R(`${GW}/referencegrants`),
      services: R("/api/v1/services"),
      endpointSlices: R("/apis/discovery.k8s.io/v1/endpointslices"),
      secrets: R("/api/v1/secrets"),
      namespaces: R("/api/v1/namespaces", false),
    });
    await using dir = await tempDir("scalwsd-signals-gw-");
    const d = dir.path;
    await Deno.writeTextFile(`${d}/kubeconfig`, kubeconfigFor(api.url));
    await Deno.writeTextFile(
      `${d}/base.yaml`,
      `server:\n  listeners: [{name: base, address: "127.0.0.1:0"}]\n  access_log: "${d}/a.log"\n`,
    );
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        ...RUN_FLAGS,
        MAIN,
        "gateway",
        ...["--base-config", `${d}/base.yaml`, "--config-out", `${d}/out/scalws.yaml`],
        ...["--kubeconfig", `${d}/kubeconfig`, "--listen-host", "127.0.0.1"],
      ],
      // Variables Deno itself acts on: an inspector, TLS secrets in a file, Deno.serve moved.
      env: {
        NODE_OPTIONS: "--inspect=127.0.0.1:9229 --no-deprecation",
        SSLKEYLOGFILE: `${d}/tls-keys.log`,
        DENO_SERVE_ADDRESS: "tcp:127.0.0.1:1",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let text = "";
    const read = (s: ReadableStream<Uint8Array>) =>
      (async () => {
        for await (const c of s.pipeThrough(new TextDecoderStream())) text += c;
      })();
    const reading = [read(child.stdout), read(child.stderr)];
    try {
      await waitUntil(() => text.includes('"event":"gateway_started"'), {
        what: "gateway_started",
        timeoutMs: 20_000,
      });
      const status = (await readProcFile(`/proc/${child.pid}/status`)) ?? "";
      const blocked = BigInt("0x" + (/SigBlk:\s*([0-9a-f]+)/.exec(status)?.[1] ?? "0"));
      assert.equal((blocked >> 9n) & 1n, 1n, `SIGUSR1 not blocked in gateway: ${status}`);
      await sleep(600); // past Deno's 500 ms grace period
      child.kill("SIGUSR1");
      await waitUntil(() => text.includes('"logs_reopened"'), { what: "logs_reopened" });
      child.kill("SIGUSR1");
      await sleep(300);
      assert.equal(await listensOn(child.pid, INSPECTOR_PORT), false, "gateway listens on 9229");
      // The first image (before the re-execution) may have said "Debugger listening" (stderr, so
      // in no fixed order with the log lines); the re-executed one, never (not on SIGUSR1).
      assert.ok(text.split("Debugger listening").length <= 2, text);
      const removed = text.split("\n").filter((l) => l.includes('"debug_env_removed"'))
        .map((l) => JSON.parse(l).name).sort();
      assert.deepEqual(removed, ["DENO_SERVE_ADDRESS", "NODE_OPTIONS", "SSLKEYLOGFILE"]);
      const environ = ((await readProcFile(`/proc/${child.pid}/environ`)) ?? "").split("\0");
      assert.ok(environ.includes("NODE_OPTIONS=--no-deprecation"), environ.join("\n"));
      assert.ok(!environ.some((e) => /^(SSLKEYLOGFILE|DENO_SERVE_ADDRESS)=/.test(e)));
      // SIGHUP, as in `scalwsd run`: reopens and reloads (the base file is read again), and the
      // process keeps running (it ended on SIGHUP before).
      await Deno.writeTextFile(
        `${d}/base.yaml`,
        `server:\n  listeners: [{name: base, address: "127.0.0.1:0"}, ` +
          `{name: base2, address: "127.0.0.1:0"}]\n  access_log: "${d}/a.log"\n`,
      );
      child.kill("SIGHUP");
      await waitUntil(() => text.includes('"event":"gateway_reloaded"'), {
        what: "gateway_reloaded after SIGHUP",
      });
      assert.match(await Deno.readTextFile(`${d}/out/scalws.yaml`), /base2/);
      const alive = await Promise.race([
        child.status.then(() => false),
        sleep(200).then(() => true),
      ]);
      assert.ok(alive, `gateway ended on SIGHUP: ${text}`);
    } finally {
      child.kill("SIGTERM");
      await child.status;
      await Promise.all(reading);
      await api.close();
    }
  },
});

Deno.test({
  name:
    "signals: `deno task run` hands NODE_OPTIONS over: --inspect-brk in it neither stops the start nor opens a debugger, its other words reach the process",
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir("scalwsd-task-env-");
    const d = dir.path;
    await Deno.writeTextFile(
      `${d}/scalws.yaml`,
      `server:\n  listeners: [{name: http, address: "127.0.0.1:0"}]\n  access_log: "${d}/a.log"\n`,
    );
    // `deno task` runs the task through `env`, which execs Deno: the child's pid is scalwsd's.
    const child = new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "run", "run", "--config", `${d}/scalws.yaml`],
      cwd: new URL("..", import.meta.url).pathname,
      // Port 0: a debugger, if one started, would not collide with another test's.
      env: { NODE_OPTIONS: "--inspect-brk=127.0.0.1:0 --no-deprecation" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let text = "";
    const read = (s: ReadableStream<Uint8Array>) =>
      (async () => {
        for await (const c of s.pipeThrough(new TextDecoderStream())) text += c;
      })();
    const reading = [read(child.stdout), read(child.stderr)];
    let pid = 0;
    try {
      await waitUntil(() => text.includes('"event":"started"'), {
        what: "scalwsd started under deno task (before: Deno waited for a debugger)",
        timeoutMs: 20_000,
      });
      pid = JSON.parse(text.split("\n").find((l) => l.includes('"event":"started"'))!).pid;
      assert.ok(!/Debugger listening|waiting for debugger/.test(text), text);
      const removed = text.split("\n").filter((l) => l.includes('"debug_env_removed"'))
        .map((l) => JSON.parse(l).name);
      assert.deepEqual(removed, ["NODE_OPTIONS"], text);
      const environ = ((await readProcFile(`/proc/${pid}/environ`)) ?? "").split("\0");
      assert.ok(environ.includes("NODE_OPTIONS=--no-deprecation"), environ.join("\n"));
      assert.ok(!environ.some((e) => e.startsWith("SCALWS_NODE_OPTIONS=")), environ.join("\n"));
    } finally {
      if (pid !== 0) Deno.kill(pid, "SIGTERM");
      else {
        // Not started: end what this test started, the task's child (Deno) and the task.
        const kids = (await readProcFile(`/proc/${child.pid}/task/${child.pid}/children`)) ?? "";
        for (const k of kids.split(" ").filter(Boolean)) Deno.kill(Number(k), "SIGKILL");
        child.kill("SIGKILL");
      }
      await child.status;
      await Promise.all(reading);
    }
  },
});
