import assert from "node:assert/strict";
import { setLogSink } from "../observe/log.ts";
import { Server } from "./server.ts";

const PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

/** A pool and a single https address that trust the same CA file. */
function yaml(ca: string, serverName: string, port: number): string {
  return `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
upstreams:
  p:
    scheme: https
    members: [{address: "127.0.0.1:8443"}]
    tls: {ca_file: "${ca}", server_name: ${serverName}}
tenants:
  - name: t
    applications:
      - name: a
        domains: [a.test]
        runtime: {type: proxy, upstream: {pool: p}}
        routes:
          - {path: /direct, runtime: {type: proxy, upstream: "https://127.0.0.1:${port}", tls_ca_file: "${ca}"}}
`;
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("expected a failure");
}

Deno.test("Server reads each CA file once per build, refusing unreadable or non-PEM ones", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-server-" });
  const file = `${dir}/scalws.yaml`;
  const ca = `${dir}/ca.pem`;
  const reads: string[] = [];
  const readPem = (path: string) => {
    reads.push(path);
    return Deno.readTextFileSync(path);
  };
  setLogSink(() => {});
  let s: Server | undefined;
  try {
    await Deno.writeTextFile(ca, PEM);
    await Deno.writeTextFile(file, yaml(ca, "api.internal", 8443));
    s = await Server.prepare(file, { accessLog: "off", readPem });
    // Checked by preflight twice (pool, route), used by the pool and the address: one read.
    assert.deepEqual(reads, [ca]);

    // Pool rebuilt (new server_name) and a new address pool: still one read.
    reads.length = 0;
    await Deno.writeTextFile(file, yaml(ca, "other.internal", 9443));
    assert.deepEqual(await s.reload(), { ok: true, generationId: 2, warnings: [] });
    assert.deepEqual(reads, [ca]);

    // An unreadable CA file: refused with today's messages, read once, nothing changed.
    reads.length = 0;
    const missing = `${dir}/missing.pem`;
    const cause = errorOf(() => Deno.readTextFileSync(missing));
    await Deno.writeTextFile(file, yaml(missing, "other.internal", 9444));
    assert.deepEqual(await s.reload(), {
      ok: false,
      errors: [
        `${file}:8:20: upstreams.p.tls.ca_file: cannot read "${missing}": ${cause}`,
        `${file}:16:101: tenants[0].applications[0].routes[0].runtime.tls_ca_file: cannot read "${missing}": ${cause}`,
      ],
    });
    assert.deepEqual(reads, [missing]);
    assert.equal(s.generation.id, 2);
    assert.equal(s.registry.pools.get("p")!.settings.tls?.server_name, "other.internal");

    // A file without a certificate: refused the same way, read once.
    reads.length = 0;
    await Deno.writeTextFile(ca, "not a certificate");
    await Deno.writeTextFile(file, yaml(ca, "third.internal", 9445));
    assert.deepEqual(await s.reload(), {
      ok: false,
      errors: [
        `${file}:8:20: upstreams.p.tls.ca_file: "${ca}" holds no PEM certificate`,
        `${file}:16:101: tenants[0].applications[0].routes[0].runtime.tls_ca_file: "${ca}" holds no PEM certificate`,
      ],
    });
    assert.deepEqual(reads, [ca]);
    assert.equal(s.generation.id, 2);
  } finally {
    await s?.drain();
    setLogSink(null);
    await Deno.remove(dir, { recursive: true });
  }
});
