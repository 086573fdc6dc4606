import assert from "node:assert/strict";
import { caCertsFor, SYSTEM_BUNDLES, systemRoots } from "./tls_roots.ts";

function env(vars: Record<string, string>): (name: string) => string | undefined {
  return (name) => vars[name];
}

function files(contents: Record<string, string>, reads: string[] = []): (path: string) => string {
  return (path) => {
    reads.push(path);
    const text = contents[path];
    if (text === undefined) throw new Deno.errors.NotFound(path);
    return text;
  };
}

Deno.test("systemRoots reads the first bundle that exists", () => {
  const reads: string[] = [];
  const roots = systemRoots(env({}), files({ [SYSTEM_BUNDLES[1]]: "PEM-1" }, reads));
  assert.deepEqual(roots, ["PEM-1"]);
  assert.deepEqual(reads, [SYSTEM_BUNDLES[0], SYSTEM_BUNDLES[1]]);
});

Deno.test("systemRoots prefers SSL_CERT_FILE", () => {
  const roots = systemRoots(
    env({ SSL_CERT_FILE: "/custom.pem" }),
    files({ "/custom.pem": "CUSTOM", [SYSTEM_BUNDLES[0]]: "DEFAULT" }),
  );
  assert.deepEqual(roots, ["CUSTOM"]);
});

Deno.test("systemRoots reads nothing when Deno already uses the system store", () => {
  const reads: string[] = [];
  const roots = systemRoots(
    env({ DENO_TLS_CA_STORE: "mozilla, system" }),
    files({ [SYSTEM_BUNDLES[0]]: "PEM" }, reads),
  );
  assert.deepEqual(roots, []);
  assert.deepEqual(reads, []);
});

Deno.test("systemRoots returns none when no bundle is readable", () => {
  assert.deepEqual(systemRoots(env({}), files({})), []);
});

Deno.test("caCertsFor appends the pool's CA and computes once per settings object", () => {
  const settings = { caCerts: ["POOL-CA"], serverName: "" };
  const a = caCertsFor(settings);
  assert.equal(a[a.length - 1], "POOL-CA");
  assert.equal(caCertsFor(settings), a);
  assert.notEqual(caCertsFor({ caCerts: ["POOL-CA"], serverName: "" }), a);
});
