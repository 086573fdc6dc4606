import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { ManualClock } from "../base/clock.ts";
import type { AcmeConfig, Config } from "../config/types.ts";
import { setLogSink } from "../observe/log.ts";
import { Registry } from "../observe/metrics.ts";
import { Http01Challenges } from "./http01.ts";
import { AcmeManager } from "./manager.ts";
import { selfSigned } from "./self_signed.ts";
import { AcmeStore, certificateId } from "./store.ts";

const ACME: AcmeConfig = { directory: "https://ca.test/dir", domains: ["a.test"] };

function configOf(stateDir: string): Config {
  return {
    server: { state_dir: stateDir, listeners: [{ tls: { certificates: [], acme: ACME } }] },
  } as unknown as Config;
}

type FakeFetch = (url: string, init: RequestInit) => Promise<Response>;

const refused: FakeFetch = () =>
  Promise.reject(new TypeError("error sending request: connection refused"));

/** A manager on a temporary state directory whose fetch (`answer`) is counted. */
async function setup(answer: FakeFetch = refused, now = Date.now()) {
  const dir = await Deno.makeTempDir();
  const logs: string[] = [];
  setLogSink((l) => logs.push(l));
  const registry = new Registry();
  const metrics = {
    expiry: registry.gauge("scalws_acme_certificate_expiry_timestamp_seconds", "", ["domain"]),
    orders: registry.counter("scalws_acme_orders_total", "", ["domain", "result"]),
  };
  const fetches: string[] = [];
  let changes = 0;
  const m = new AcmeManager({
    clock: new ManualClock(now),
    random: () => 0.5,
    challenges: new Http01Challenges(),
    onChange: () => changes++,
    metrics,
    fetchFor: () => ({
      fetch: (url, init) => {
        fetches.push(url);
        return answer(url, init);
      },
      close: () => {},
    }),
  });
  return {
    dir,
    m,
    logs,
    fetches,
    registry,
    changes: () => changes,
    async [Symbol.asyncDispose]() {
      await m.stop();
      setLogSink(null);
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function store(dir: string, notBeforeMs: number, days: number) {
  const s = await selfSigned(ACME.domains, notBeforeMs + 3_600_000, days);
  await new AcmeStore(dir).saveCertificate(certificateId(ACME.directory, ACME.domains), s);
  return new X509Certificate(s.cert).fingerprint256;
}

const fp = (pem: string) => new X509Certificate(pem).fingerprint256;

async function failedLine(logs: string[]) {
  for (let i = 0; i < 200; i++) {
    const l = logs.find((l) => l.includes('"acme_order_failed"'));
    if (l !== undefined) return JSON.parse(l);
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("no acme_order_failed");
}

Deno.test("AcmeManager: without a stored certificate, a placeholder only for a listener with none of its own; no order before start", async () => {
  await using t = await setup();
  await t.m.sync(configOf(t.dir));
  const [p] = t.m.certificatesFor(ACME, true);
  assert.deepEqual(p.names, ["a.test"]);
  assert.equal(new X509Certificate(p.cert).subjectAltName, "DNS:a.test");
  assert.deepEqual(t.m.certificatesFor(ACME, false), []);
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(t.fetches, []);
});

Deno.test("AcmeManager: a stored valid certificate is served without ordering", async () => {
  await using t = await setup();
  const stored = await store(t.dir, Date.now(), 30);
  await t.m.sync(configOf(t.dir));
  t.m.start();
  const [c] = t.m.certificatesFor(ACME, true);
  assert.equal(fp(c.cert), stored);
  assert.deepEqual(t.m.certificatesFor(ACME, false).map((x) => fp(x.cert)), [stored]);
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(t.fetches, []);
  assert.ok(t.logs.some((l) => l.includes('"acme_certificate_loaded"')));
  assert.match(t.registry.render(), /expiry_timestamp_seconds\{domain="a.test"\} \d+/);
});

Deno.test("AcmeManager: an expired stored certificate is ignored; a failed order logs why and keeps what serves", async () => {
  await using t = await setup();
  await store(t.dir, Date.now() - 10 * 86_400_000, 2);
  await t.m.sync(configOf(t.dir));
  assert.ok(t.logs.some((l) => l.includes('"acme_certificate_ignored"') && l.includes("expired")));
  const placeholder = fp(t.m.certificatesFor(ACME, true)[0].cert);
  t.m.start();
  const line = await failedLine(t.logs);
  assert.deepEqual(t.fetches, ["https://ca.test/dir"]);
  assert.match(line.error, /connection refused/);
  assert.equal(line.failures, 1);
  assert.equal(line.retry_in_s, 60);
  assert.equal(line.serving, "fallback");
  assert.equal(fp(t.m.certificatesFor(ACME, true)[0].cert), placeholder);
  assert.match(t.registry.render(), /scalws_acme_orders_total\{domain="a.test",result="error"\} 1/);
  // The account key was made and kept even though the order failed.
  assert.equal([...Deno.readDirSync(`${t.dir}/acme/accounts`)].length, 1);
});

Deno.test("AcmeManager: a rate limit's Retry-After makes the next try wait longer than the backoff", async () => {
  const answer: FakeFetch = (url, init) => {
    if (url.endsWith("/dir")) {
      return Promise.resolve(Response.json({
        newNonce: "https://ca.test/nonce",
        newAccount: "https://ca.test/acct",
        newOrder: "https://ca.test/order",
      }));
    }
    if (init.method === "HEAD") {
      return Promise.resolve(new Response(null, { headers: { "replay-nonce": "n1" } }));
    }
    return Promise.resolve(
      new Response(
        JSON.stringify({ type: "urn:ietf:params:acme:error:rateLimited", detail: "too many" }),
        { status: 429, headers: { "retry-after": "7200", "replay-nonce": "n2" } },
      ),
    );
  };
  await using t = await setup(answer);
  await t.m.sync(configOf(t.dir));
  t.m.start();
  const line = await failedLine(t.logs);
  assert.match(line.error, /rateLimited: too many/);
  assert.equal(line.retry_in_s, 7200);
});
