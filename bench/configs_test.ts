import assert from "node:assert/strict";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { x509Version } from "../src/config/x509_version.ts";
import { parseConfig } from "../src/config/load.ts";
import {
  type BenchLayout,
  cookieLua,
  fpmConf,
  haproxyConf,
  memberNginxConf,
  postLua,
  proxyNginxConf,
  scalwsdYaml,
  TLS_BODY,
  varnishArgs,
  varnishVcl,
} from "./configs.ts";
import { findExecutable } from "./procs.ts";
import { makeCertificates } from "./tls_load.ts";

function layout(dir: string): BenchLayout {
  return {
    dir,
    members: [40001, 40002],
    scalwsd: 40003,
    nginx: 40004,
    haproxy: 40005,
    floor: 40006,
    affinity: ["a".repeat(32), "b".repeat(32)],
    root: Deno.uid() === 0,
    keepalive: 48,
  };
}

Deno.test("scalwsdYaml is a valid scalwsd configuration with the bench's routes and pools", () => {
  const { config } = parseConfig(scalwsdYaml(layout("/tmp/x")), "bench.yaml");
  assert.equal(config.server.access_log, "off");
  assert.equal(config.server.upstream_client.keepalive, 48);
  assert.deepEqual(Object.keys(config.upstreams).sort(), ["hashed", "one", "rr"]);
  assert.equal(config.upstreams.rr.members.length, 2);
  assert.equal(config.upstreams.hashed.balance, "hash");
  const app = config.tenants[0].applications[0];
  assert.deepEqual(app.routes.map((r) => r.path), [
    "/one",
    "/rr",
    "/hash",
    "/respond",
    "/cache",
    "/storm",
    "/dcache",
  ]);
  assert.ok(app.routes[4].cache && app.routes[5].cache && app.routes[6].cache);
  assert.equal(config.server.cache.path, "/tmp/x/scalwsd-cache");
});

Deno.test("Varnish gets member a as its backend and 256 MiB of malloc storage", () => {
  const l = { ...layout("/tmp/x"), varnish: 40009 };
  assert.match(varnishVcl(l), /backend a \{ \.host = "127\.0\.0\.1"; \.port = "40001"; \}/);
  const args = varnishArgs(l).join(" ");
  assert.match(args, /-a 127\.0\.0\.1:40009 -f \/tmp\/x\/varnish\.vcl -s malloc,256m/);
});

Deno.test("the proxies' configs give every member the same idle keep-alive cap", () => {
  const l = layout("/tmp/x");
  assert.equal(proxyNginxConf(l).match(/keepalive 48;/g)?.length, 3);
  assert.match(proxyNginxConf(l), /proxy_cache_path \/tmp\/x\/nginx-cache keys_zone=objects:16m/);
  assert.equal(haproxyConf(l).match(/pool-max-conn 48/g)?.length, 3);
  assert.match(haproxyConf(l), /server b 127\.0\.0\.1:40002 cookie b{32}/);
  assert.match(proxyNginxConf(l), /hash \$cookie_BENCHAFF consistent;/);
});

Deno.test("wrk scripts: a POST of the given size and one cookie per thread", () => {
  assert.match(postLua(65536), /wrk\.method = "POST"\nwrk\.body = string\.rep\("x", 65536\)/);
  const lua = cookieLua(["v1", "v2"]);
  assert.match(lua, /local cookies = \{ "BENCHAFF=v1", "BENCHAFF=v2" \}/);
  assert.match(lua, /wrk\.headers\["Cookie"\] = cookie/);
});

const TLS = {
  certDir: "/tmp/c",
  scalwsd: { rsa: 40011, ecdsa: 40012 },
  nginx: { rsa: 40013, ecdsa: 40014 },
  nginxNoResume: { rsa: 40015, ecdsa: 40016 },
};

const openssl = findExecutable("openssl");

Deno.test({
  name: "TLS scenarios: fresh v3 certificates; scalwsd and nginx answer 64 bytes on them",
  ignore: openssl === undefined, // scalwsd's configuration check reads the certificates
  async fn() {
    const certDir = await Deno.makeTempDir({ prefix: "bench-certs-" });
    try {
      await makeCertificates(openssl!, certDir);
      // X.509 v3 naming bench.test, RSA-2048 and ECDSA P-256 keys.
      for (const [kind, type, detail] of [["rsa", "rsa", 2048], ["ecdsa", "ec", "prime256v1"]]) {
        const cert = new X509Certificate(await Deno.readTextFile(`${certDir}/${kind}.pem`));
        assert.equal(x509Version(new Uint8Array(cert.raw)), 3);
        assert.equal(cert.subjectAltName, "DNS:bench.test");
        const key = createPrivateKey(await Deno.readTextFile(`${certDir}/${kind}.key`));
        assert.equal(key.asymmetricKeyType, type);
        const d = key.asymmetricKeyDetails!;
        assert.equal(d.modulusLength ?? d.namedCurve, detail);
      }
      const l = { ...layout("/tmp/x"), tls: { ...TLS, certDir } };
      assert.equal(TLS_BODY.length, 64);
      const { config } = parseConfig(scalwsdYaml(l), "bench.yaml");
      const listeners = config.server.listeners.filter((x) => x.tls !== undefined);
      assert.deepEqual(listeners.map((x) => [x.name, x.port]), [["tls-rsa", 40011], [
        "tls-ecdsa",
        40012,
      ]]);
      assert.deepEqual(listeners[1].tls!.certificates, [{
        cert: `${certDir}/ecdsa.pem`,
        key: `${certDir}/ecdsa.key`,
      }]);
      const app = config.tenants[0].applications[1];
      assert.deepEqual(app.domains, ["bench.test"]);
      assert.deepEqual(app.runtime, { type: "respond", status: 200, body: TLS_BODY, headers: {} });
      const n = proxyNginxConf(l);
      assert.match(n, /listen 127\.0\.0\.1:40013 ssl http2 backlog=4096;/);
      assert.match(
        n,
        /listen 127\.0\.0\.1:40016 ssl http2[^}]*ecdsa\.pem[^}]*ssl_session_cache off;/,
      );
      assert.equal(n.match(/ssl_protocols TLSv1\.2 TLSv1\.3;/g)?.length, 4);
      assert.equal(n.match(/ssl_session_tickets on;/g)?.length, 2);
      assert.equal(n.match(/ssl_session_tickets off;/g)?.length, 2);
      assert.equal(n.match(/return 200 "x{63}\\n";/g)?.length, 4);
      assert.doesNotMatch(scalwsdYaml(layout("/tmp/x")), /tls/);
    } finally {
      await Deno.remove(certDir, { recursive: true });
    }
  },
});

const nginx = findExecutable("nginx");
const haproxy = findExecutable("haproxy");

Deno.test({
  name: "nginx accepts the member and proxy configurations (nginx -t)",
  ignore: nginx === undefined,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "bench-conf-" });
    try {
      const certDir = `${dir}/tls`;
      if (openssl !== undefined) await makeCertificates(openssl, certDir);
      const l = { ...layout(dir), ...(openssl !== undefined ? { tls: { ...TLS, certDir } } : {}) };
      for (const name of ["member-a", "nginx"]) {
        for (const t of ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]) {
          await Deno.mkdir(`${dir}/${name}-tmp/${t}`, { recursive: true });
        }
      }
      await Deno.writeTextFile(`${dir}/member-a.conf`, memberNginxConf(l, 0));
      await Deno.writeTextFile(`${dir}/nginx.conf`, proxyNginxConf(l));
      for (const name of ["member-a", "nginx"]) {
        const out = await new Deno.Command(nginx!, {
          args: ["-t", "-q", "-p", dir, "-e", `${dir}/t.log`, "-c", `${dir}/${name}.conf`],
          stdout: "piped",
          stderr: "piped",
        }).output();
        assert.equal(out.code, 0, `${name}: ${new TextDecoder().decode(out.stderr)}`);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "HAProxy accepts its configuration (haproxy -c)",
  ignore: haproxy === undefined,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "bench-conf-" });
    try {
      await Deno.writeTextFile(`${dir}/haproxy.cfg`, haproxyConf(layout(dir)));
      const out = await new Deno.Command(haproxy!, {
        args: ["-c", "-q", "-f", `${dir}/haproxy.cfg`],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("the php and node scenarios route to the same applications in scalwsd and nginx", () => {
  const l = {
    dir: "/tmp/b",
    members: [1, 2] as const,
    scalwsd: 3,
    nginx: 4,
    haproxy: 5,
    floor: 6,
    affinity: ["a", "b"] as const,
    root: false,
    keepalive: 32,
    fpmSocket: "/tmp/b/fpm.sock",
    nodePort: 6,
  };
  const y = scalwsdYaml(l);
  assert.match(
    y,
    /runtime: \{ type: php, fastcgi: "unix:\/tmp\/b\/fpm.sock", root: \/tmp\/b\/www \}/,
  );
  assert.match(y, /runtime: \{ type: node, entry: \/tmp\/b\/hello.js, workers: 1 \}/);
  const n = proxyNginxConf(l);
  assert.match(n, /upstream fpm \{ server unix:\/tmp\/b\/fpm.sock; \}/);
  assert.match(n, /fastcgi_pass fpm;\s+fastcgi_param/);
  assert.doesNotMatch(n, /fastcgi_keep_conn on/);
  assert.match(n, /upstream nodeapp \{ server 127.0.0.1:6; keepalive 32;/);
  assert.match(fpmConf(l), /pm.max_children = 4/);
  // Without them, neither appears.
  const plain = { ...l, fpmSocket: undefined, nodePort: undefined };
  assert.doesNotMatch(scalwsdYaml(plain), /type: php|type: node/);
  assert.doesNotMatch(proxyNginxConf(plain), /fastcgi_pass|nodeapp/);
});
