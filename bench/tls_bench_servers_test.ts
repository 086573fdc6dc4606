import assert from "node:assert/strict";
import { findExecutable } from "./procs.ts";
import { tlsNginxConf } from "./tls_bench_servers.ts";

Deno.test("tlsNginxConf keeps nginx in the foreground with the certificates and directives given", () => {
  const conf = tlsNginxConf("/d", 8443, ["ecdsa", "rsa"], "    root /d/www;");
  assert.match(conf, /^daemon off;\n/);
  assert.match(conf, /listen 127\.0\.0\.1:8443 ssl http2;/);
  assert.deepEqual(conf.match(/ssl_certificate \S+;/g), [
    "ssl_certificate /d/ecdsa.pem;",
    "ssl_certificate /d/rsa.pem;",
  ]);
  assert.ok(conf.endsWith("ssl_protocols TLSv1.2 TLSv1.3;\n    root /d/www;\n  }\n}\n"));
});

/** The script a TLS bench task runs, cut to its start: nginx and a child of its own, then wait. */
const SCRIPT = `
import { findExecutable, freePorts, waitListening, withProcs } from "${
  new URL("./procs.ts", import.meta.url).href
}";
import { prepareTlsDir, spawnNginx, tlsNginxConf } from "${
  new URL("./tls_bench_servers.ts", import.meta.url).href
}";
await withProcs("procs-test", async (procs, dir) => {
  await prepareTlsDir(findExecutable("openssl"), dir);
  const [port] = freePorts(1);
  const nginx = await spawnNginx(procs, findExecutable("nginx"), dir,
    tlsNginxConf(dir, port, ["ecdsa"], "    return 200;"));
  const sleeper = await procs.spawn("sleeper", "sleep", ["60"], dir + "/sleep.log");
  await waitListening(port, 20000);
  console.log(JSON.stringify({ dir, port, pids: [nginx.pid, sleeper.pid] }));
  await new Promise((r) => setTimeout(r, 60000));
});
`;

/** Whether `pid` exists (`kill -0`: reading /proc takes more than this test's permissions). */
async function alive(pid: number): Promise<boolean> {
  const out = await new Deno.Command("sh", { args: ["-c", `kill -0 ${pid} 2>/dev/null`] }).output();
  return out.code === 0;
}

Deno.test({
  name:
    "a TLS bench interrupted by SIGINT stops nginx and every other child, and removes its files",
  ignore: findExecutable("nginx") === undefined || findExecutable("openssl") === undefined,
  fn: async () => {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["eval", "--ext=ts", SCRIPT],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    try {
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let line = "";
      while (!line.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        line += value;
      }
      reader.releaseLock();
      const started = JSON.parse(line) as { dir: string; port: number; pids: number[] };
      (await Deno.connect({ hostname: "127.0.0.1", port: started.port })).close();
      for (const pid of started.pids) assert.equal(await alive(pid), true);

      child.kill("SIGINT");
      const status = await child.status;
      assert.equal(status.code, 130);
      for (const pid of started.pids) assert.equal(await alive(pid), false, `pid ${pid} runs`);
      await assert.rejects(
        Deno.connect({ hostname: "127.0.0.1", port: started.port }),
        Deno.errors.ConnectionRefused,
      );
      await assert.rejects(Deno.stat(started.dir), Deno.errors.NotFound);
      await child.stderr.cancel();
    } finally {
      clearTimeout(killer);
      try {
        child.kill("SIGKILL");
      } catch {
        // ended
      }
      await child.status;
    }
  },
});
