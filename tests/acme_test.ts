/**
 * Automatic certificates against Debian's `pebble` on loopback: issuance over HTTP-01 on the
 * plain listener, the stored certificate loaded at the next start without ordering, renewal
 * of short-lived certificates swapped in without a failed connection, and a failed renewal
 * that logs its reason while the previous certificate keeps serving.
 */
import assert from "node:assert/strict";
import tls from "node:tls";
import { get, startPki, startScalwsd, tempDir, waitUntil } from "./_support/mod.ts";
import { type Pebble, startPebble } from "./_support/pebble.ts";
import { freePort } from "./_support/ports.ts";
import { fingerprint, TlsClient } from "./_support/tls_client.ts";

function config(
  o: { httpPort: number; pebble: Pebble; state: string; httpsPort?: number; reusePort?: boolean },
): string {
  return `
server:
  state_dir: ${o.state}
  listener_mode: ${o.reusePort ? "reuseport" : "shared"}
  listeners:
    - {name: http, address: "127.0.0.1:${o.httpPort}"}
    - name: https
      address: "127.0.0.1:${o.httpsPort ?? 0}"
      tls:
        acme:
          directory: "${o.pebble.directory}"
          email: ops@a.test
          domains: [a.test]
          ca_file: ${o.pebble.caFile}
  admin: {socket: "{{dir}}/admin.sock"}
tenants:
  - name: t
    applications:
      - name: a
        domains: [a.test, b.test]
        runtime: {type: respond, body: "app a"}
`;
}

/** The fingerprint of the certificate presented for `a.test` on a new connection (unverified). */
function presented(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({
      host: "127.0.0.1",
      port,
      servername: "a.test",
      rejectUnauthorized: false,
    });
    s.once("secureConnect", () => {
      const fp = s.getPeerCertificate().fingerprint256;
      s.end();
      s.once("close", () => resolve(fp));
    });
    s.once("error", reject);
  });
}

/** A GET on a new connection verified against `root` (pebble's issuer): status, body, cert. */
async function verifiedGet(port: number, root: string) {
  await using c = await TlsClient.connect(port, root, "a.test");
  return await c.get("a.test");
}

async function plainGet(port: number, host: string, path: string) {
  const res = await get(`http://127.0.0.1:${port}${path}`, { host });
  return { status: res.status, body: res.text };
}

const count = (logs: string[], event: string) =>
  logs.filter((l) => l.includes(`"event":"${event}"`)).length;

Deno.test("acme: pebble issues the certificate over HTTP-01; a restart loads it without ordering", async () => {
  await using state = await tempDir();
  const httpPort = freePort();
  await using pebble = await startPebble({ httpPort, names: ["a.test"] });
  const yaml = config({ httpPort, pebble, state: state.path });
  let fp: string;
  {
    await using s = await startScalwsd(yaml);
    const port = s.server.bound.get("https")!.port;
    const root = await pebble.issuerRoot();
    // The chain verifies against pebble's root once the order succeeded and was swapped in.
    const r = await waitUntil(() => verifiedGet(port, root), {
      what: "a certificate from pebble",
      timeoutMs: 15_000,
      intervalMs: 50,
    });
    assert.deepEqual(r, { status: 200, body: "app a" });
    assert.equal(count(s.logs, "acme_order_started"), 1);
    assert.equal(count(s.logs, "acme_order_succeeded"), 1);
    // Pebble's validation requests were answered on the plain listener.
    assert.ok(s.logs.some((l) => l.includes('"acme_challenge_answered"')));
    fp = await presented(port);
    // The challenge path of an ACME domain is scalwsd's (404, never the application); another
    // host's is routed.
    assert.deepEqual(await plainGet(httpPort, "a.test", "/.well-known/acme-challenge/nope"), {
      status: 404,
      body: "Not Found\n",
    });
    assert.deepEqual(await plainGet(httpPort, "b.test", "/.well-known/acme-challenge/nope"), {
      status: 200,
      body: "app a",
    });
    assert.deepEqual(await plainGet(httpPort, "a.test", "/"), { status: 200, body: "app a" });
    // Account and certificate files: mode 0600.
    for (const sub of ["accounts", "certificates"]) {
      const files = [...Deno.readDirSync(`${state.path}/acme/${sub}`)];
      assert.equal(files.length, 1, sub);
      const st = Deno.statSync(`${state.path}/acme/${sub}/${files[0].name}`);
      assert.equal(st.mode! & 0o777, 0o600, files[0].name);
    }
    const metric = s.server.metrics.registry.render().split("\n")
      .find((l) =>
        l.startsWith('scalws_acme_certificate_expiry_timestamp_seconds{domain="a.test"}')
      );
    assert.ok(metric !== undefined && Number(metric.split(" ")[1]) > Date.now() / 1000, metric);
  }
  await using s = await startScalwsd(yaml);
  const port = s.server.bound.get("https")!.port;
  assert.equal(await presented(port), fp);
  assert.deepEqual(await verifiedGet(port, await pebble.issuerRoot()), {
    status: 200,
    body: "app a",
  });
  assert.equal(count(s.logs, "acme_certificate_loaded"), 1);
  assert.equal(count(s.logs, "acme_order_started"), 0);
});

Deno.test("acme: short-lived certificates renew without a failed connection; a failed renewal keeps the old one and logs why", async () => {
  await using state = await tempDir();
  const httpPort = freePort();
  await using pebble = await startPebble({ httpPort, names: ["a.test"], validitySeconds: 4 });
  // No jitter: renewal at exactly two thirds of the 4 s lifetime (margin for a loaded machine).
  await using s = await startScalwsd(config({ httpPort, pebble, state: state.path }), {
    acme: { random: () => 0 },
  });
  const port = s.server.bound.get("https")!.port;
  await waitUntil(() => count(s.logs, "acme_order_succeeded") >= 1, {
    what: "the first certificate",
    timeoutMs: 15_000,
  });
  const first = await waitUntil(async () => {
    const fp = await presented(port);
    return (await verifiedGet(port, await pebble.issuerRoot())).status === 200 && fp;
  }, { what: "the first certificate served", timeoutMs: 5000, intervalMs: 20 });
  // New connections, one after another, while the renewal is ordered and swapped in.
  const errors: string[] = [];
  let second = first;
  for (let i = 0; i < 2000 && second === first; i++) {
    try {
      second = await presented(port);
    } catch (err) {
      errors.push(String(err));
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.deepEqual(errors, []);
  assert.notEqual(second, first);
  assert.ok(count(s.logs, "acme_order_succeeded") >= 2);
  // The next renewal cannot be validated: a.test now points where nothing listens.
  pebble.resolve("a.test", "127.0.0.2");
  const failed = await waitUntil(
    () => s.logs.find((l) => l.includes('"event":"acme_order_failed"')),
    { what: "a failed renewal", timeoutMs: 10_000 },
  );
  const line = JSON.parse(failed);
  assert.deepEqual(line.domains, ["a.test"]);
  assert.match(line.error, /a\.test: authorization invalid: .*connect/i);
  assert.equal(line.serving, "acme");
  assert.equal(line.retry_in_s, 54); // 1 min, -10% with random() = 0
  assert.equal(await presented(port), second);
});

const metric = (s: { server: { metrics: { registry: { render(): string } } } }, name: string) =>
  s.server.metrics.registry.render().split("\n").find((l) => l.startsWith(name))?.split(" ")[1];

Deno.test("acme: two instances sharing state_dir and reusePort ports: one orders, both serve its certificate", async () => {
  await using state = await tempDir();
  const httpPort = freePort();
  const httpsPort = freePort();
  await using pebble = await startPebble({ httpPort, names: ["a.test"] });
  const yaml = config({ httpPort, httpsPort, pebble, state: state.path, reusePort: true });
  const options = { acme: { lockWaitMs: 100 } };
  // Both start at once: each sees no stored certificate and wants to order.
  const [a, b] = await Promise.all([startScalwsd(yaml, options), startScalwsd(yaml, options)]);
  await using _a = a;
  await using _b = b;
  const expiry = 'scalws_acme_certificate_expiry_timestamp_seconds{domain="a.test"}';
  await waitUntil(() => metric(a, expiry) !== undefined && metric(b, expiry) !== undefined, {
    what: "both instances holding a certificate",
    timeoutMs: 15_000,
    intervalMs: 20,
  });
  assert.equal(metric(a, expiry), metric(b, expiry));
  const ok = 'scalws_acme_orders_total{domain="a.test",result="ok"}';
  assert.deepEqual([metric(a, ok), metric(b, ok)].sort(), ["1", undefined]);
  assert.equal(pebble.output().match(/Issued certificate serial/g)?.length, 1);
  // Whichever instance takes a connection presents the one issued certificate.
  const root = await pebble.issuerRoot();
  const seen = new Set<string>();
  for (let i = 0; i < 8; i++) {
    assert.deepEqual(await verifiedGet(httpsPort, root), { status: 200, body: "app a" });
    seen.add(await presented(httpsPort));
  }
  assert.equal(seen.size, 1);
});

Deno.test("acme: a reload that adds tls.acme beside a certificate serves that certificate until the ordered one replaces it", async () => {
  await using state = await tempDir();
  await using pki = await startPki();
  const own = await pki.issue("own", ["a.test"]);
  const httpPort = freePort();
  await using pebble = await startPebble({ httpPort, names: ["a.test"] });
  const withAcme = config({ httpPort, pebble, state: state.path }).replace(
    "      tls:\n",
    `      tls:\n        certificates: [{cert: ${own.cert}, key: ${own.key}}]\n`,
  );
  const without = withAcme.replace(/ {8}acme:\n( {10}.*\n)+/, "");
  assert.ok(!without.includes("acme:") && without.includes("certificates:"));
  await using s = await startScalwsd(without);
  const port = s.server.bound.get("https")!.port;
  const ownFp = await fingerprint(own.cert);
  assert.equal(await presented(port), ownFp);
  await s.write(withAcme);
  assert.equal((await s.server.reload()).ok, true);
  // Until the order succeeds, the configured certificate keeps serving.
  assert.equal(await presented(port), ownFp);
  const root = await pebble.issuerRoot();
  const r = await waitUntil(() => verifiedGet(port, root), {
    what: "the ordered certificate",
    timeoutMs: 15_000,
    intervalMs: 50,
  });
  assert.deepEqual(r, { status: 200, body: "app a" });
  assert.notEqual(await presented(port), ownFp);
});
