import assert from "node:assert/strict";
import type { TlsLayout } from "./configs.ts";
import { SCENARIOS, type TlsLoad } from "./scenarios.ts";
import { certArgs, h2loadArgs, resumeCount, tlsPort } from "./tls_load.ts";

const T: TlsLayout = {
  certDir: "/tmp/c",
  scalwsd: { rsa: 1, ecdsa: 2 },
  nginx: { rsa: 3, ecdsa: 4 },
  nginxNoResume: { rsa: 5, ecdsa: 6 },
};

Deno.test("tlsPort: scalwsd by certificate; nginx without resumption for full handshakes", () => {
  const load = (cert: "rsa" | "ecdsa", connection: TlsLoad["connection"]): TlsLoad => ({
    cert,
    h2: false,
    connection,
    cpuTarget: 1.5,
  });
  assert.equal(tlsPort(T, "scalwsd", load("ecdsa", "full")), 2);
  assert.equal(tlsPort(T, "nginx", load("rsa", "resume")), 3);
  assert.equal(tlsPort(T, "nginx", load("rsa", "keep-alive")), 3);
  assert.equal(tlsPort(T, "nginx", load("ecdsa", "full")), 6);
  assert.throws(() => tlsPort(T, "haproxy", load("rsa", "full")), /scalwsd and nginx only/);
});

Deno.test("h2loadArgs: keep-alive by duration, new connections by count with Connection: close", () => {
  const h1: TlsLoad = { cert: "rsa", h2: false, connection: "keep-alive", cpuTarget: 1.5 };
  assert.deepEqual(h2loadArgs({ port: 9, load: h1, clients: 64, threads: 2, seconds: 5 }), [
    "-t2",
    "-c64",
    "-m1",
    "--h1",
    "-D5",
    "-N10s",
    "--connect-to=127.0.0.1:9",
    "https://bench.test:9/",
  ]);
  const h2 = h2loadArgs({
    port: 9,
    load: { ...h1, h2: true },
    clients: 1,
    threads: 2,
    seconds: 1,
    logFile: "/tmp/l",
  });
  assert.deepEqual(h2.slice(0, 3), ["-t1", "-c1", "-m1"]);
  assert.ok(!h2.includes("--h1") && h2.includes("--log-file=/tmp/l"));
  const resume: TlsLoad = { cert: "rsa", h2: false, connection: "resume", cpuTarget: 2 };
  const r = h2loadArgs({ port: 9, load: resume, clients: 64, threads: 2, requests: 640 });
  assert.deepEqual(r.slice(4, 7), ["-n640", "-H", "Connection: close"]);
  assert.throws(
    () => h2loadArgs({ port: 9, load: resume, clients: 64, threads: 2, seconds: 5 }),
    /needs a count/,
  );
  assert.throws(
    () => h2loadArgs({ port: 9, load: h1, clients: 64, threads: 2, requests: 5 }),
    /needs a duration/,
  );
  assert.throws(
    () =>
      h2loadArgs({ port: 9, load: { ...resume, h2: true }, clients: 2, threads: 1, requests: 4 }),
    /over HTTP\/2 is the full-handshake load/,
  );
  const full: TlsLoad = { ...resume, connection: "full" };
  const fullH2 = h2loadArgs({
    port: 9,
    load: { ...full, h2: true },
    clients: 1,
    threads: 1,
    requests: 1,
  });
  assert.ok(fullH2.includes("-n1") && !fullH2.includes("Connection: close"), "no h1 header on h2");
  assert.throws(
    () => h2loadArgs({ port: 9, load: full, clients: 64, threads: 2, requests: 128 }),
    /one request per client/,
  );
});

Deno.test("resumeCount sizes a run from the last rate, a multiple of the clients", () => {
  assert.equal(resumeCount(undefined, 5, 64), 512);
  assert.equal(resumeCount(1000, 5, 64), 5056); // 79 per client
  assert.equal(resumeCount(10, 5, 64), 256); // at least 4 per client
  assert.equal(resumeCount(NaN, 5, 64), 512);
});

Deno.test("the TLS scenarios: keep-alive h1 and h2, resumed and full handshakes, both keys", () => {
  const tls = SCENARIOS.filter((s) => s.tls !== undefined);
  assert.deepEqual(
    tls.map((s) => [s.name, s.tls!.connection, s.tls!.cert, s.tls!.h2, s.tls!.cpuTarget]),
    [
      ["tls-get-64", "keep-alive", "rsa", false, 1.5],
      ["tls-get-64-h2", "keep-alive", "rsa", true, 1.5],
      ["tls-new", "resume", "rsa", false, 1.3],
      ["tls-full", "full", "rsa", false, 1.5],
      ["tls-full-ecdsa", "full", "ecdsa", false, 1.3],
    ],
  );
  for (const s of tls) assert.deepEqual(s.servers, ["scalwsd", "nginx"]);
});

Deno.test("certArgs: RSA-2048 and ECDSA P-256, the bench host as subject alternative name", () => {
  const rsa = certArgs("rsa", "/d").join(" ");
  assert.match(rsa, /-newkey rsa:2048 -nodes -keyout \/d\/rsa\.key -out \/d\/rsa\.pem/);
  assert.match(rsa, /-addext subjectAltName=DNS:bench\.test$/);
  assert.match(certArgs("ecdsa", "/d").join(" "), /-newkey ec -pkeyopt ec_paramgen_curve:P-256/);
});
