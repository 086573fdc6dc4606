/**
 * `type: php` when the client leaves before its answer (issue 23): a queued request is dropped
 * and never reaches PHP, a running one has its FastCGI connection closed so that PHP-FPM stops
 * the script at its next output and the worker serves the next request (as nginx does), both
 * counted in `scalws_fastcgi_client_gone_total`; and the access log's request id and upstream
 * times for FastCGI requests, the id being what PHP sees. Real PHP-FPM with one worker.
 */
import assert from "node:assert/strict";
import { adminFetch, request, scalwsYaml, startScalwsd, waitUntil } from "./_support/mod.ts";
import { phpFpmBinary, startPhpFpm } from "./_support/php_fpm.ts";

const ignore = phpFpmBinary() === null;

/**
 * `?ms=N` works N ms, printing a dot every 50 ms (PHP notices a closed connection only when it
 * writes); `?mark=NAME` first creates the file NAME in the marks directory, and `done-NAME` at
 * the end. Answers with its request id.
 */
const SCRIPT = (marks: string) =>
  `<?php
$mark = isset($_GET['mark']) ? basename($_GET['mark']) : null;
if ($mark !== null) touch('${marks}/' . $mark);
$ms = isset($_GET['ms']) ? (int)$_GET['ms'] : 0;
for ($t = 0; $t < $ms; $t += 50) { echo "."; flush(); usleep(50000); }
if ($mark !== null) touch('${marks}/done-' . $mark);
echo "id " . $_SERVER['HTTP_X_REQUEST_ID'];
`;

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Sends a GET on a raw connection and returns the connection, to be closed unanswered. */
async function leaveAfterSending(port: number, target: string): Promise<Deno.Conn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(`GET ${target} HTTP/1.1\r\nHost: site.test\r\n\r\n`));
  return conn;
}

async function metrics(socket: string): Promise<string> {
  return await (await adminFetch(socket, "/metrics")).text();
}

function value(text: string, series: string): number {
  const i = text.indexOf(series + " ");
  return i < 0 ? NaN : Number(text.slice(i + series.length + 1, text.indexOf("\n", i)));
}

Deno.test({
  name: "php: a client that leaves is dropped from the queue or its script stopped; log times",
  ignore,
  async fn(t) {
    await using fpm = await startPhpFpm({ children: 1 });
    const root = await Deno.makeTempDir({ prefix: "scalwsd-php-gone-" });
    const marks = `${root}/marks`;
    await Deno.mkdir(marks);
    await Deno.chmod(marks, 0o777);
    await Deno.writeTextFile(`${root}/index.php`, SCRIPT(marks));
    const accessLog = `${root}/access.log`;
    try {
      await using s = await startScalwsd(
        scalwsYaml({
          apps: [{
            name: "site",
            domains: ["site.test"],
            runtime: { type: "php", root, fastcgi: { address: fpm.address, max_conns: 1 } },
          }],
        }),
        { accessLog },
      );
      const port = Number(new URL(s.url).port);
      const up = `upstream="${fpm.address}"`;
      const get = (target: string) =>
        request(`${s.url}${target}`, { headers: { host: "site.test" } });

      await t.step("a queued request whose client left never reaches PHP", async () => {
        const busy = get("/index.php?ms=600&mark=a");
        await waitUntil(() => exists(`${marks}/a`), { what: "a running", timeoutMs: 5000 });
        const b = await leaveAfterSending(port, "/index.php?mark=b");
        await waitUntil(
          async () =>
            value(await metrics(s.adminSocket), `scalws_fastcgi_queue_length{${up}}`) === 1,
          { what: "b queued", timeoutMs: 3000, intervalMs: 20 },
        );
        b.close();
        await waitUntil(
          async () =>
            value(await metrics(s.adminSocket), `scalws_fastcgi_queue_length{${up}}`) === 0,
          { what: "b dropped", timeoutMs: 3000, intervalMs: 20 },
        );
        assert.equal((await busy).status, 200);
        // FIFO on one worker: had b been sent, it would have run before c.
        const c = await get("/index.php?mark=c");
        assert.equal(c.status, 200);
        assert.equal(await exists(`${marks}/b`), false, "b reached PHP");
        const m = await metrics(s.adminSocket);
        assert.equal(value(m, `scalws_fastcgi_client_gone_total{${up},when="queued"}`), 1);
      });

      await t.step("a running request whose client left frees the worker", async () => {
        const d = await leaveAfterSending(port, "/index.php?ms=5000&mark=d");
        await waitUntil(() => exists(`${marks}/d`), { what: "d running", timeoutMs: 5000 });
        const t0 = Date.now();
        d.close();
        // The next request gets the only worker long before d's 5 s are over.
        const e = await get("/index.php?mark=e");
        assert.equal(e.status, 200);
        assert.ok(Date.now() - t0 < 2500, `the worker came free after ${Date.now() - t0} ms`);
        assert.equal(await exists(`${marks}/done-d`), false, "d ran to its end");
        const m = await metrics(s.adminSocket);
        assert.equal(value(m, `scalws_fastcgi_client_gone_total{${up},when="running"}`), 1);
      });

      await t.step("the access log has the request id PHP saw and the upstream times", async () => {
        const r = await get("/index.php?ms=100");
        assert.equal(r.status, 200);
        const id = /id ([0-9a-f]{32})$/.exec(r.text)?.[1];
        assert.ok(id !== undefined, r.text);
        let line: Record<string, unknown> | undefined;
        await waitUntil(async () => {
          const text = await Deno.readTextFile(accessLog).catch(() => "");
          line = text.trim().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))
            .find((l) => l.request_id === id);
          return line !== undefined;
        }, { what: "the access log line", timeoutMs: 3000 });
        const l = line!;
        assert.equal(l.status, 200);
        assert.equal(l.upstream_member, fpm.address);
        assert.equal(typeof l.upstream_connect, "number");
        assert.equal(typeof l.upstream_header, "number");
        const connect = l.upstream_connect as number;
        const header = l.upstream_header as number;
        assert.ok(connect >= 0 && connect <= header, JSON.stringify(l));
        // The script prints its first dot at once, so the head comes before its 100 ms.
        assert.ok(header <= (l.duration as number), JSON.stringify(l));
      });
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});
