/**
 * `runtime: {type: php}` against Debian's PHP-FPM started by the test: a front controller app
 * (routes, POST form, upload, headers and cookies, Location, a fatal error, a slow script and
 * `response_timeout`), the CGI params, static files beside the scripts, and the security
 * cases (no script outside the root, only `.php` runs, httpoxy, deny_paths).
 */
import assert from "node:assert/strict";
import { adminFetch, get, request, scalwsYaml, startScalwsd, waitUntil } from "./_support/mod.ts";
import { phpFpmBinary, startPhpFpm } from "./_support/php_fpm.ts";

const ignore = phpFpmBinary() === null;

const FRONT = `<?php
$uri = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
switch ($uri) {
  case '/': echo "home"; break;
  case '/form':
    echo $_SERVER['REQUEST_METHOD'] === 'POST' ? "name=" . $_POST['name'] : "form";
    break;
  case '/upload':
    $f = $_FILES['file'];
    echo $f['name'] . ":" . filesize($f['tmp_name']) . ":" . md5_file($f['tmp_name']);
    break;
  case '/cookies':
    header('X-App: yes');
    setcookie('a', '1');
    setcookie('b', '2');
    echo "c";
    break;
  case '/go': header('Location: /there'); break;
  case '/created': http_response_code(201); header('Location: /new'); echo "made"; break;
  case '/fatal': undefined_function_here(); break;
  case '/slow': sleep(3); echo "late"; break;
  case '/big': echo str_repeat("0123456789", 30000); break;
  case '/env':
    header('Content-Type: application/json');
    echo json_encode($_SERVER);
    break;
  default: http_response_code(404); echo "no route " . $uri;
}
`;

/** A document root: the front controller, a script with PATH_INFO, static files, traps. */
async function docroot(): Promise<{ root: string; outside: string; close(): Promise<void> }> {
  const root = await Deno.makeTempDir({ prefix: "scalwsd-php-root-" });
  const outside = await Deno.makeTempDir({ prefix: "scalwsd-php-outside-" });
  await Deno.writeTextFile(`${root}/index.php`, FRONT);
  await Deno.writeTextFile(
    `${root}/info.php`,
    `<?php header('Content-Type: application/json'); echo json_encode([` +
      `'script' => $_SERVER['SCRIPT_NAME'], 'info' => $_SERVER['PATH_INFO'] ?? null,` +
      `'file' => $_SERVER['SCRIPT_FILENAME']]);`,
  );
  await Deno.writeTextFile(`${root}/style.css`, "body{}");
  await Deno.mkdir(`${root}/uploads`);
  await Deno.writeTextFile(`${root}/uploads/evil.jpg`, `<?php echo "EVIL";`);
  await Deno.mkdir(`${root}/private`);
  await Deno.writeTextFile(`${root}/private/secret.php`, `<?php echo "PRIVATE";`);
  await Deno.writeTextFile(`${outside}/secret.php`, `<?php echo "OUTSIDE";`);
  await Deno.symlink(`${outside}/secret.php`, `${root}/link.php`);
  await Deno.symlink(`${root}/uploads/evil.jpg`, `${root}/trick.php`);
  await Deno.symlink(`${root}/index.php`, `${root}/source`);
  return {
    root,
    outside,
    async close() {
      await Deno.remove(root, { recursive: true });
      await Deno.remove(outside, { recursive: true });
    },
  };
}

function yaml(
  root: string,
  fastcgi: unknown,
  extra: Record<string, unknown> = {},
  upstreams?: Record<string, unknown>,
) {
  return scalwsYaml({
    server: { default_host: "php.test" },
    ...(upstreams !== undefined ? { upstreams } : {}),
    apps: [{
      name: "site",
      domains: ["php.test"],
      deny_paths: ["/private"],
      runtime: {
        type: "php",
        fastcgi,
        root,
        front_controller: "/index.php",
        params: { APP_ENV: "test" },
        ...extra,
      },
    }],
  });
}

Deno.test({
  name: "php: a front controller app on PHP-FPM, routes, forms, uploads, headers",
  ignore,
  async fn() {
    await using fpm = await startPhpFpm();
    const dr = await docroot();
    try {
      await using s = await startScalwsd(yaml(dr.root, fpm.address));
      const home = await fetch(`${s.url}/`);
      assert.equal(home.status, 200);
      assert.equal(await home.text(), "home");
      const missing = await fetch(`${s.url}/some/route?x=1`);
      assert.equal(missing.status, 404);
      assert.equal(await missing.text(), "no route /some/route");

      const form = await fetch(`${s.url}/form`, {
        method: "POST",
        body: new URLSearchParams({ name: "Zoë" }),
      });
      assert.equal(await form.text(), "name=Zoë");

      const data = new Uint8Array(300_000).map((_, i) => (i * 7) % 256);
      const fd = new FormData();
      fd.append("file", new Blob([data]), "pic.bin");
      const up = await fetch(`${s.url}/upload`, { method: "POST", body: fd });
      const md5 = new Deno.Command("md5sum", { stdin: "piped", stdout: "piped" }).spawn();
      const w = md5.stdin.getWriter();
      await w.write(data);
      await w.close();
      const sum = new TextDecoder().decode((await md5.output()).stdout).split(" ")[0];
      assert.equal(await up.text(), `pic.bin:300000:${sum}`);

      const cookies = await fetch(`${s.url}/cookies`);
      assert.equal(cookies.headers.get("x-app"), "yes");
      assert.deepEqual(cookies.headers.getSetCookie(), ["a=1", "b=2"]);
      await cookies.body?.cancel();

      const go = await fetch(`${s.url}/go`, { redirect: "manual" });
      assert.equal(go.status, 302);
      assert.equal(go.headers.get("location"), "/there");
      await go.body?.cancel();
      const created = await fetch(`${s.url}/created`, { redirect: "manual" });
      assert.equal(created.status, 201);
      assert.equal(created.headers.get("location"), "/new");
      assert.equal(await created.text(), "made");

      const big = await fetch(`${s.url}/big`);
      assert.equal((await big.text()).length, 300_000);

      const fatal = await fetch(`${s.url}/fatal`);
      assert.equal(fatal.status, 500);
      await fatal.body?.cancel();
      await waitUntil(
        () =>
          s.logs.some((l) => l.includes("fastcgi_stderr") && l.includes("undefined_function_here")),
        {
          what: "the fatal error in the event log",
        },
      );

      const css = await fetch(`${s.url}/style.css`);
      assert.equal(css.headers.get("content-type"), "text/css; charset=utf-8");
      assert.equal(await css.text(), "body{}");
    } finally {
      await dr.close();
    }
  },
});

Deno.test({
  name: "php: CGI params, PATH_INFO, httpoxy, extra params",
  ignore,
  async fn() {
    await using fpm = await startPhpFpm();
    const dr = await docroot();
    try {
      await using s = await startScalwsd(yaml(dr.root, fpm.address));
      const env = await request(`${s.url}/env?a=1&b=%20`, {
        headers: { host: "php.test:8080", proxy: "http://evil:1", "x-thing": "v", "x_under": "u" },
      });
      const e = JSON.parse(env.text);
      const real = await Deno.realPath(dr.root);
      assert.equal(e.SCRIPT_FILENAME, `${real}/index.php`);
      assert.equal(e.SCRIPT_NAME, "/index.php");
      assert.equal(e.DOCUMENT_ROOT, real);
      assert.equal(e.QUERY_STRING, "a=1&b=%20");
      assert.equal(e.REQUEST_URI, "/env?a=1&b=%20");
      assert.equal(e.REQUEST_METHOD, "GET");
      assert.equal(e.SERVER_NAME, "php.test");
      // The listener's port, as nginx's $server_port: not the Host header's.
      assert.equal(e.SERVER_PORT, new URL(s.url).port);
      assert.equal(e.SERVER_PROTOCOL, "HTTP/1.1");
      assert.equal(e.REMOTE_ADDR, "127.0.0.1");
      assert.equal(e.HTTP_HOST, "php.test:8080");
      assert.equal(e.HTTP_X_THING, "v");
      assert.equal(e.HTTP_X_UNDER, undefined);
      assert.equal(e.HTTP_PROXY, undefined);
      assert.equal(e.HTTPS, undefined);
      assert.equal(e.APP_ENV, "test");
      assert.equal(e.GATEWAY_INTERFACE, "CGI/1.1");

      const info = await (await fetch(`${s.url}/info.php/extra/path?q`)).json();
      assert.deepEqual(info, {
        script: "/info.php",
        info: "/extra/path",
        file: `${real}/info.php`,
      });
    } finally {
      await dr.close();
    }
  },
});

Deno.test({
  name: "php: only .php files under the root run; traps are refused",
  ignore,
  async fn() {
    await using fpm = await startPhpFpm();
    const dr = await docroot();
    try {
      await using s = await startScalwsd(yaml(dr.root, fpm.address));
      // The classic: evil.jpg is never run as PHP, whatever follows it.
      const evil = await fetch(`${s.url}/uploads/evil.jpg/x.php`);
      assert.equal(await evil.text(), "no route /uploads/evil.jpg/x.php");
      const evil2 = await fetch(`${s.url}/uploads/evil.jpg/.php`);
      assert.doesNotMatch(await evil2.text(), /EVIL/);
      // Served as what it is: bytes of a picture.
      const raw = await fetch(`${s.url}/uploads/evil.jpg`);
      assert.equal(raw.headers.get("content-type"), "image/jpeg");
      assert.equal(await raw.text(), `<?php echo "EVIL";`);
      // A .php symlink leading outside the root does not run.
      const link = await fetch(`${s.url}/link.php`);
      assert.equal(await link.text(), "no route /link.php");
      // A .php symlink to a file that is not .php does not run either.
      const trick = await fetch(`${s.url}/trick.php`);
      assert.doesNotMatch(await trick.text(), /EVIL/);
      // PHP source is never sent as a file.
      const source = await fetch(`${s.url}/source`);
      assert.equal(source.status, 403);
      assert.doesNotMatch(await source.text(), /<\?php/);
      // deny_paths first: the script exists but is never run.
      const priv = await get(`${s.url}/private/secret.php`, { host: "php.test" });
      assert.equal(priv.status, 404);
      assert.doesNotMatch(priv.text, /PRIVATE/);
      const climb = await request(`${s.url}/uploads/%2e%2e/private/secret.php`, {
        headers: { host: "php.test" },
      });
      assert.equal(climb.status, 404);
      assert.doesNotMatch(climb.text, /PRIVATE/);
      const out = await request(`${s.url}/../../${dr.outside}/secret.php`, {
        headers: { host: "php.test" },
      });
      assert.doesNotMatch(out.text, /OUTSIDE/);
    } finally {
      await dr.close();
    }
  },
});

Deno.test({
  name: "php: a slow script past response_timeout is 504; PHP-FPM gone is 502",
  ignore,
  async fn() {
    const fpm = await startPhpFpm();
    const dr = await docroot();
    try {
      await using s = await startScalwsd(yaml(dr.root, fpm.address, { response_timeout: "500ms" }));
      const t0 = Date.now();
      const slow = await fetch(`${s.url}/slow`);
      assert.equal(slow.status, 504);
      await slow.body?.cancel();
      assert.ok(Date.now() - t0 < 2500, `took ${Date.now() - t0} ms`);
      await fpm.close();
      const gone = await fetch(`${s.url}/`);
      assert.equal(gone.status, 502);
      await gone.body?.cancel();
    } finally {
      await fpm.close();
      await dr.close();
    }
  },
});

Deno.test({
  name: "php: a protocol: fastcgi pool with two PHP-FPMs, one stopped, serves every GET",
  ignore,
  async fn() {
    await using a = await startPhpFpm({ children: 1, tcp: true });
    const b = await startPhpFpm({ children: 1, tcp: true });
    const dr = await docroot();
    try {
      await using s = await startScalwsd(
        yaml(dr.root, { pool: "fpm" }, {}, {
          fpm: {
            protocol: "fastcgi",
            balance: "least_conn",
            members: [{ address: a.address }, { address: b.address }],
          },
        }),
      );
      for (let i = 0; i < 4; i++) assert.equal(await (await fetch(`${s.url}/`)).text(), "home");
      await b.close();
      for (let i = 0; i < 10; i++) {
        const r = await fetch(`${s.url}/`);
        assert.equal(r.status, 200);
        assert.equal(await r.text(), "home");
      }
    } finally {
      await b.close();
      await dr.close();
    }
  },
});

Deno.test({
  name: "php: status_path reads PHP-FPM's busy processes into scalws_app_fpm_* metrics",
  ignore,
  async fn() {
    await using fpm = await startPhpFpm({ children: 2, extra: "pm.status_path = /fpm-status" });
    const dr = await docroot();
    try {
      await using s = await startScalwsd(
        yaml(dr.root, fpm.address, { status_path: "/fpm-status" }),
      );
      const slow = fetch(`${s.url}/slow`);
      const text = await waitUntil(async () => {
        const t = await (await adminFetch(s.adminSocket, "/metrics")).text();
        return /scalws_app_fpm_busy_processes\{tenant="t",app="site"\} 1\n/.test(t) ? t : false;
      }, { what: "one busy PHP-FPM process", timeoutMs: 6000, intervalMs: 200 });
      assert.match(text, /scalws_app_fpm_processes\{tenant="t",app="site"\} 2\n/);
      await (await slow).body?.cancel();
    } finally {
      await dr.close();
    }
  },
});

Deno.test({
  name: "php: bodies over max_body are 413, a stalled upload is 408, as for proxying",
  ignore,
  async fn() {
    await using fpm = await startPhpFpm();
    const dr = await docroot();
    try {
      await using s = await startScalwsd(scalwsYaml({
        server: { default_host: "php.test", limits: { body_read_timeout: "300ms" } },
        apps: [{
          name: "site",
          domains: ["php.test"],
          max_body: "1KiB",
          runtime: {
            type: "php",
            fastcgi: fpm.address,
            root: dr.root,
            front_controller: "/index.php",
          },
        }],
      }));
      const big = await request(`${s.url}/form`, {
        method: "POST",
        headers: { host: "php.test", "content-type": "application/x-www-form-urlencoded" },
        body: "name=" + "x".repeat(2000),
      });
      assert.equal(big.status, 413);
      const chunked = await request(`${s.url}/form`, {
        method: "POST",
        headers: { host: "php.test", "transfer-encoding": "chunked" },
        body: "7d0\r\n" + "x".repeat(2000) + "\r\n0\r\n\r\n",
      });
      assert.equal(chunked.status, 413);
      const ok = await request(`${s.url}/form`, {
        method: "POST",
        headers: { host: "php.test", "content-type": "application/x-www-form-urlencoded" },
        body: "name=small",
      });
      assert.equal(ok.text, "name=small");
      // Half a body, then nothing: 408 after body_read_timeout.
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(s.url).port) });
      await conn.write(
        new TextEncoder().encode(
          "POST /form HTTP/1.1\r\nhost: php.test\r\ncontent-length: 100\r\n\r\nname=abc",
        ),
      );
      const buf = new Uint8Array(4096);
      const n = await conn.read(buf);
      conn.close();
      assert.match(new TextDecoder().decode(buf.subarray(0, n ?? 0)), /^HTTP\/1\.1 408 /);
    } finally {
      await dr.close();
    }
  },
});
