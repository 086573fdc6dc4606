/**
 * `type: php` under more clients than PHP-FPM has workers (issue 23): FastCGI connections
 * bounded by `max_conns` (or the pool's `pm.max_children` read from its status page), the
 * queue inside scalwsd (`max_queue`, then `503`; `response_timeout`, then `504`), its metrics,
 * and no request lost while PHP-FPM recycles its workers (`pm.max_requests`). Real PHP-FPM.
 */
import assert from "node:assert/strict";
import { adminFetch, request, scalwsYaml, startScalwsd, waitUntil } from "./_support/mod.ts";
import { phpFpmBinary, startPhpFpm } from "./_support/php_fpm.ts";

const ignore = phpFpmBinary() === null;

/** `?ms=N` sleeps N ms; a POST answers with the length of its body. */
const SCRIPT = `<?php
if (isset($_GET['ms'])) usleep((int)$_GET['ms'] * 1000);
if ($_SERVER['REQUEST_METHOD'] === 'POST') {
  echo "got " . strlen(file_get_contents('php://input')) . " " . getmypid();
} else {
  echo "ok " . getmypid();
}
`;

async function docroot(): Promise<string> {
  const root = await Deno.makeTempDir({ prefix: "scalwsd-php-load-" });
  await Deno.writeTextFile(`${root}/index.php`, SCRIPT);
  return root;
}

function phpApp(name: string, root: string, fastcgi: unknown, extra: Record<string, unknown> = {}) {
  return {
    name,
    domains: [`${name}.test`],
    runtime: { type: "php", fastcgi, root, ...extra },
  };
}

async function metric(socket: string, name: string): Promise<number> {
  const text = await (await adminFetch(socket, "/metrics")).text();
  const m = text.match(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m"));
  return m === null ? NaN : Number(m[1]);
}

Deno.test({
  name: "php load: 16 clients on 4 PHP-FPM workers all get 200 within seconds, in a queue",
  ignore,
  async fn() {
    await using fpm = await startPhpFpm({
      children: 4,
      extra: "pm.status_path = /fpm-status",
    });
    const root = await docroot();
    try {
      await using s = await startScalwsd(scalwsYaml({
        server: { default_host: "site.test" },
        apps: [phpApp("site", root, fpm.address, { status_path: "/fpm-status" })],
      }));
      // The status page tells pm.max_children (static: 4); it becomes the limit.
      await waitUntil(async () => {
        const t = await (await adminFetch(s.adminSocket, "/metrics")).text();
        return /scalws_app_fpm_processes\{tenant="t",app="site"\} 4\n/.test(t);
      }, { what: "PHP-FPM's status read", timeoutMs: 5000, intervalMs: 100 });

      const t0 = Date.now();
      const answers = Array.from(
        { length: 16 },
        () =>
          request(`${s.url}/index.php?ms=200`, { headers: { host: "site.test" } }).then((r) => ({
            status: r.status,
            text: r.text,
            ms: Date.now() - t0,
          })),
      );
      let peakQueue = 0;
      let peakConns = 0;
      let settled = false;
      const all = Promise.all(answers).finally(() => settled = true);
      while (!settled) {
        peakQueue = Math.max(peakQueue, await metric(s.adminSocket, "scalws_fastcgi_queue_length"));
        peakConns = Math.max(peakConns, await metric(s.adminSocket, "scalws_fastcgi_connections"));
        await new Promise((r) => setTimeout(r, 50));
      }
      const done = await all;
      for (const a of done) {
        assert.equal(a.status, 200);
        assert.match(a.text, /^ok \d+$/);
      }
      // 4 rounds of 200 ms; far from PHP-FPM's accept queue stalling a minute.
      const slowest = Math.max(...done.map((a) => a.ms));
      assert.ok(slowest < 5000, `slowest answer after ${slowest} ms`);
      assert.ok(peakQueue >= 1, `nothing waited in scalwsd (peak queue ${peakQueue})`);
      assert.ok(peakConns <= 4, `${peakConns} connections to a 4-worker pool`);
      assert.equal(await metric(s.adminSocket, "scalws_fastcgi_queue_length"), 0);
      assert.equal(await metric(s.adminSocket, "scalws_fastcgi_connections"), 0);
      assert.equal(await metric(s.adminSocket, "scalws_fastcgi_queue_wait_seconds_count"), 16);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "php load: past max_queue 503 with Retry-After; a wait past response_timeout is 504",
  ignore,
  async fn() {
    await using fpm = await startPhpFpm({ children: 2 });
    const root = await docroot();
    try {
      // Two applications on one address share its one connection and its queue of one.
      const fastcgi = { address: fpm.address, max_conns: 1, max_queue: 1 };
      await using s = await startScalwsd(scalwsYaml({
        apps: [
          phpApp("long", root, fastcgi),
          phpApp("short", root, fastcgi, { response_timeout: "300ms" }),
        ],
      }));
      const busy = request(`${s.url}/index.php?ms=1000`, { headers: { host: "long.test" } });
      await waitUntil(
        async () => await metric(s.adminSocket, "scalws_fastcgi_connections") === 1,
        { what: "the one connection in use", timeoutMs: 3000, intervalMs: 20 },
      );
      const t0 = Date.now();
      const waiting = request(`${s.url}/index.php`, { headers: { host: "short.test" } });
      await waitUntil(
        async () => await metric(s.adminSocket, "scalws_fastcgi_queue_length") === 1,
        { what: "one request in the queue", timeoutMs: 3000, intervalMs: 20 },
      );
      const full = await request(`${s.url}/index.php`, { headers: { host: "long.test" } });
      assert.equal(full.status, 503);
      assert.equal(full.headers.get("retry-after"), "1");
      const late = await waiting;
      assert.equal(late.status, 504);
      const waited = Date.now() - t0;
      assert.ok(waited >= 250 && waited < 900, `504 after ${waited} ms`);
      assert.equal((await busy).status, 200);
      assert.ok(s.logs.some((l) => l.includes("for a FastCGI connection timed out")));
      assert.ok(s.logs.some((l) => l.includes('"fastcgi_queue_full"')));
      // The queue is free again.
      const after = await request(`${s.url}/index.php`, { headers: { host: "short.test" } });
      assert.equal(after.status, 200);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "php load: 2,000 POSTs while PHP-FPM recycles its workers every 50 requests, none lost",
  ignore,
  async fn() {
    await using fpm = await startPhpFpm({ children: 4, extra: "pm.max_requests = 50" });
    const root = await docroot();
    try {
      await using s = await startScalwsd(scalwsYaml({
        server: { default_host: "site.test" },
        apps: [phpApp("site", root, fpm.address)],
      }));
      const body = "x".repeat(300);
      const statuses = new Map<string, number>();
      const pids = new Set<string>();
      // About 2,000 POSTs; bounded in time too on a busy machine.
      const deadline = Date.now() + 12_000;
      let sent = 0;
      const client = async () => {
        while (sent < 2000 && Date.now() < deadline) {
          sent++;
          const r = await fetch(`${s.url}/index.php`, { method: "POST", body });
          const text = await r.text();
          const m = /^got (\d+) (\d+)$/.exec(text);
          const key = r.status === 200 && m?.[1] === String(body.length)
            ? "ok"
            : `${r.status} ${text}`;
          statuses.set(key, (statuses.get(key) ?? 0) + 1);
          if (m !== null) pids.add(m[2]);
        }
      };
      await Promise.all(Array.from({ length: 8 }, client));
      assert.deepEqual([...statuses.keys()], ["ok"]);
      const ok = statuses.get("ok")!;
      assert.ok(ok >= 300, `only ${ok} POSTs in 12 s`);
      // Workers were recycled along the way: more PIDs than the 4 workers.
      assert.ok(pids.size >= 4 + Math.floor(ok / 50 / 2), `${pids.size} PIDs for ${ok} POSTs`);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});
