/**
 * The FastCGI params PHP sees through Debian's PHP-FPM, as nginx's `fastcgi_params` pass them:
 * `HTTP_HOST` from an absolute-form target, `REMOTE_PORT`, `SERVER_ADDR`, `SERVER_PORT` of the
 * listener, `REQUEST_SCHEME`, `CONTENT_LENGTH` empty without a body, `SERVER_NAME` lower-cased,
 * and a `params` override of `SERVER_SOFTWARE`; over TLS (HTTP/1.1 and HTTP/2) `HTTPS=on`.
 */
import assert from "node:assert/strict";
import { scalwsYaml, startPki, startScalwsd } from "./_support/mod.ts";
import { httpsListener } from "./_support/yaml.ts";
import { curl } from "./_support/tls_client.ts";
import { phpFpmBinary, startPhpFpm } from "./_support/php_fpm.ts";
import { RawConn } from "./_support/raw_conn.ts";

const ignore = phpFpmBinary() === null;

Deno.test({
  name: "php params: what $_SERVER holds, as nginx's fastcgi_params",
  ignore,
  async fn() {
    await using fpm = await startPhpFpm({ children: 1 });
    const root = await Deno.makeTempDir({ prefix: "scalwsd-php-params-" });
    try {
      await Deno.writeTextFile(
        `${root}/env.php`,
        `<?php header('Content-Type: application/json'); echo json_encode($_SERVER);`,
      );
      await using s = await startScalwsd(scalwsYaml({
        apps: [{
          name: "wiki",
          domains: ["wiki.test"],
          runtime: {
            type: "php",
            fastcgi: fpm.address,
            root,
            params: { SERVER_SOFTWARE: "nginx/1.22.1" },
          },
        }],
      }));
      const port = Number(new URL(s.url).port);
      await using c = await RawConn.open(port);
      const local = c.conn.localAddr as Deno.NetAddr;
      // Routed by the absolute-form target's authority; Host is not what PHP sees either.
      await c.write(
        `GET http://WiKi.test:${port}/env.php?x=1 HTTP/1.1\r\nHost: evil.example\r\n\r\n`,
      );
      const res = await c.response();
      assert.equal(res?.status, 200, res?.head);
      const e = JSON.parse(res!.body);
      assert.equal(e.HTTP_HOST, `WiKi.test:${port}`);
      assert.equal(e.SERVER_NAME, "wiki.test");
      assert.equal(e.SERVER_PORT, String(port));
      assert.equal(e.SERVER_ADDR, "127.0.0.1");
      assert.equal(e.REMOTE_ADDR, "127.0.0.1");
      assert.equal(e.REMOTE_PORT, String(local.port));
      assert.equal(e.REQUEST_SCHEME, "http");
      assert.equal(e.HTTPS, undefined);
      assert.equal(e.CONTENT_LENGTH, "");
      assert.equal(e.QUERY_STRING, "x=1");
      assert.equal(e.REQUEST_URI, "/env.php?x=1");
      assert.equal(e.SERVER_SOFTWARE, "nginx/1.22.1");

      // A POST: its length.
      await c.write("POST /env.php HTTP/1.1\r\nHost: wiki.test\r\nContent-Length: 3\r\n\r\na=1");
      const post = JSON.parse((await c.response())!.body);
      assert.equal(post.CONTENT_LENGTH, "3");
      assert.equal(post.HTTP_HOST, "wiki.test");
      // An empty body the client declared: 0 (nginx's $content_length); none declared: empty.
      await c.write("POST /env.php HTTP/1.1\r\nHost: wiki.test\r\nContent-Length: 0\r\n\r\n");
      assert.equal(JSON.parse((await c.response())!.body).CONTENT_LENGTH, "0");
      await c.write("POST /env.php HTTP/1.1\r\nHost: wiki.test\r\n\r\n");
      assert.equal(JSON.parse((await c.response())!.body).CONTENT_LENGTH, "");
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "php params over TLS: HTTPS=on, REQUEST_SCHEME https, the TLS listener's port, HTTP/1.1 and HTTP/2",
  ignore,
  async fn() {
    await using fpm = await startPhpFpm({ children: 1 });
    await using pki = await startPki();
    const cert = await pki.issue("wiki", ["wiki.test"]);
    const root = await Deno.makeTempDir({ prefix: "scalwsd-php-params-tls-" });
    try {
      await Deno.writeTextFile(
        `${root}/env.php`,
        `<?php header('Content-Type: application/json'); echo json_encode($_SERVER);`,
      );
      await using s = await startScalwsd(scalwsYaml({
        server: { listeners: [httpsListener(cert)] },
        apps: [{
          name: "wiki",
          domains: ["wiki.test"],
          runtime: { type: "php", fastcgi: fpm.address, root },
        }],
      }));
      const port = s.server.bound.get("https")!.port;
      for (const version of [["--http1.1"], ["--http2"]]) {
        const r = await curl(port, pki.caFile, "wiki.test", "/env.php", version);
        assert.equal(r.status, 200, r.body);
        assert.equal(r.version, version[0] === "--http2" ? "2" : "1.1");
        const e = JSON.parse(r.body);
        assert.equal(e.HTTPS, "on");
        assert.equal(e.REQUEST_SCHEME, "https");
        assert.equal(e.SERVER_PORT, String(port));
        assert.equal(e.SERVER_NAME, "wiki.test");
        assert.equal(e.HTTP_HOST, `wiki.test:${port}`);
        assert.equal(e.SERVER_ADDR, "127.0.0.1");
        assert.match(e.REMOTE_PORT, /^[1-9]\d*$/);
        assert.equal(e.CONTENT_LENGTH, "");
      }
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});
