/**
 * The FastCGI connection limit where issue 23 names it besides the `fastcgi` address form: on
 * the members of a `protocol: fastcgi` pool (`max_conns` per member, `max_queue` on the pool,
 * the metrics under the pool's name), and its default when `status_path` cannot tell PHP-FPM's
 * `pm.max_children`: 8; several Unix-socket members in one pool; the queue's default length,
 * 256. Real PHP-FPM with more workers than the limit, so any bound seen is scalwsd's.
 */
import assert from "node:assert/strict";
import { adminFetch, request, scalwsYaml, startScalwsd, waitUntil } from "./_support/mod.ts";
import { phpFpmBinary, startPhpFpm } from "./_support/php_fpm.ts";

const ignore = phpFpmBinary() === null;

async function metric(socket: string, name: string, upstream: string): Promise<number> {
  const text = await (await adminFetch(socket, "/metrics")).text();
  const m = text.match(new RegExp(`^${name}\\{upstream="${upstream}"\\} (\\S+)$`, "m"));
  return m === null ? NaN : Number(m[1]);
}

/** `n` requests at once for `?ms=`; their statuses, and the peak of the connections metric. */
async function burst(
  s: { url: string; adminSocket: string },
  host: string,
  upstream: string,
  n: number,
  ms: number,
) {
  let settled = false;
  const all = Promise.all(
    Array.from(
      { length: n },
      () => request(`${s.url}/index.php?ms=${ms}`, { headers: { host } }).then((r) => r.status),
    ),
  ).finally(() => settled = true);
  let peakConns = 0;
  let peakQueue = 0;
  while (!settled) {
    peakConns = Math.max(
      peakConns,
      await metric(s.adminSocket, "scalws_fastcgi_connections", upstream),
    );
    peakQueue = Math.max(
      peakQueue,
      await metric(s.adminSocket, "scalws_fastcgi_queue_length", upstream),
    );
    await new Promise((r) => setTimeout(r, 20));
  }
  return { statuses: await all, peakConns, peakQueue };
}

Deno.test({
  name: "php: max_conns on protocol: fastcgi pool members, max_queue on the pool, default limit 8",
  ignore,
  async fn() {
    await using fpm = await startPhpFpm({ children: 10 });
    const root = await Deno.makeTempDir({ prefix: "scalwsd-php-pool-conns-" });
    try {
      await Deno.writeTextFile(
        `${root}/index.php`,
        `<?php usleep((int)($_GET['ms'] ?? 0) * 1000); echo "ok";`,
      );
      await using s = await startScalwsd(scalwsYaml({
        upstreams: {
          fpm: {
            protocol: "fastcgi",
            max_queue: 2,
            members: [{ address: fpm.address, max_conns: 2 }],
          },
        },
        apps: [
          {
            name: "pool",
            domains: ["pool.test"],
            runtime: { type: "php", root, fastcgi: { pool: "fpm" } },
          },
          {
            name: "plain",
            domains: ["plain.test"],
            runtime: { type: "php", root, fastcgi: fpm.address },
          },
        ],
      }));

      // A member's max_conns: 2 of PHP-FPM's 10 workers; the rest wait in the pool's queue.
      const pool = await burst(s, "pool.test", "fpm", 4, 300);
      assert.deepEqual(pool.statuses, [200, 200, 200, 200]);
      assert.equal(pool.peakConns, 2);
      assert.ok(pool.peakQueue >= 1, `peak queue ${pool.peakQueue}`);

      // Past the pool's max_queue (2 waiting behind 2 running): 503 with Retry-After.
      const running = Array.from(
        { length: 4 },
        () => request(`${s.url}/index.php?ms=600`, { headers: { host: "pool.test" } }),
      );
      await waitUntil(
        async () => await metric(s.adminSocket, "scalws_fastcgi_queue_length", "fpm") === 2,
        { what: "two requests in the pool's queue", timeoutMs: 3000, intervalMs: 20 },
      );
      const full = await request(`${s.url}/index.php`, { headers: { host: "pool.test" } });
      assert.equal(full.status, 503);
      assert.equal(full.headers.get("retry-after"), "1");
      assert.deepEqual((await Promise.all(running)).map((r) => r.status), [200, 200, 200, 200]);

      // No max_conns, no status_path: at most 8 connections although PHP-FPM has 10 workers.
      const plain = await burst(s, "plain.test", fpm.address, 10, 400);
      assert.deepEqual(plain.statuses, Array(10).fill(200));
      assert.equal(plain.peakConns, 8);
      assert.ok(plain.peakQueue >= 1, `peak queue ${plain.peakQueue}`);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "php: a protocol: fastcgi pool of two PHP-FPMs on Unix sockets, each with its max_conns",
  ignore,
  async fn() {
    await using a = await startPhpFpm({ children: 2 });
    await using b = await startPhpFpm({ children: 2 });
    const root = await Deno.makeTempDir({ prefix: "scalwsd-php-pool-unix-" });
    try {
      await Deno.writeTextFile(
        `${root}/index.php`,
        `<?php usleep((int)($_GET['ms'] ?? 0) * 1000); echo $_SERVER['SERVER_SOFTWARE'] . " " . getmypid();`,
      );
      await using s = await startScalwsd(scalwsYaml({
        upstreams: {
          fpm: {
            protocol: "fastcgi",
            members: [{ address: a.address, max_conns: 1 }, { address: b.address, max_conns: 1 }],
          },
        },
        apps: [{
          name: "pool",
          domains: ["pool.test"],
          runtime: { type: "php", root, fastcgi: { pool: "fpm" } },
        }],
      }));
      const pids = new Set<string>();
      for (let i = 0; i < 8; i++) {
        const r = await request(`${s.url}/index.php`, { headers: { host: "pool.test" } });
        assert.equal(r.status, 200, r.text);
        pids.add(r.text.split(" ")[1]);
      }
      // Round robin over both PHP-FPMs (each has 2 workers: at least one PID of each).
      assert.ok(pids.size >= 2, `PIDs ${[...pids]}`);
      // One connection per member at once: 2 for the pool.
      const burst4 = await burst(s, "pool.test", "fpm", 6, 300);
      assert.deepEqual(burst4.statuses, Array(6).fill(200));
      assert.equal(burst4.peakConns, 2);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "php: the queue holds 256 by default; the 257th waiting request gets 503 with Retry-After",
  ignore,
  async fn() {
    await using fpm = await startPhpFpm({ children: 2 });
    const root = await Deno.makeTempDir({ prefix: "scalwsd-php-queue-" });
    try {
      await Deno.writeTextFile(
        `${root}/index.php`,
        `<?php usleep((int)($_GET['ms'] ?? 0) * 1000); echo "ok";`,
      );
      await using s = await startScalwsd(scalwsYaml({
        apps: [{
          name: "a",
          domains: ["a.test"],
          runtime: { type: "php", root, fastcgi: { address: fpm.address, max_conns: 1 } },
        }],
      }));
      const get = (ms: number) =>
        request(`${s.url}/index.php?ms=${ms}`, { headers: { host: "a.test" } });
      const busy = get(3000); // long enough for 256 more to arrive on a busy machine
      await waitUntil(
        async () => await metric(s.adminSocket, "scalws_fastcgi_connections", fpm.address) === 1,
        { what: "the one connection in use", timeoutMs: 3000, intervalMs: 20 },
      );
      const queued = Array.from({ length: 256 }, () => get(0));
      await waitUntil(
        async () => await metric(s.adminSocket, "scalws_fastcgi_queue_length", fpm.address) === 256,
        { what: "256 requests in the queue", timeoutMs: 10_000, intervalMs: 20 },
      );
      const full = await get(0);
      assert.equal(full.status, 503);
      assert.equal(full.headers.get("retry-after"), "1");
      assert.equal((await busy).status, 200);
      const statuses = (await Promise.all(queued)).map((r) => r.status);
      assert.deepEqual(statuses, Array(256).fill(200));
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});
