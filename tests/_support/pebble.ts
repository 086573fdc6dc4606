/**
 * Debian's `pebble` (the ACME test server) on loopback for end-to-end tests: its HTTPS
 * certificate from a throw-away CA (`caFile`), its validation authority resolving names with
 * a fake name server (answers 127.0.0.1 for `names`) and connecting to `httpPort` for HTTP-01,
 * no artificial sleeps and no rejected nonces.
 *
 *     await using pebble = await startPebble({ httpPort, names: ["a.test"] });
 */
import { makePki } from "../../src/base/_test_certs.ts";
import { type FakeDns, startFakeDns } from "../../src/discovery/_dns_test_server.ts";
import { freePort } from "./ports.ts";

export interface Pebble extends AsyncDisposable {
  /** `https://127.0.0.1:PORT/dir`. */
  readonly directory: string;
  /** The CA that signed pebble's own HTTPS certificate (`tls.acme.ca_file`). */
  readonly caFile: string;
  readonly dns: FakeDns;
  /** Points `name` at `address` (A record) for pebble's validation authority. */
  resolve(name: string, address: string): void;
  /** PEM root of the certificates pebble issues (its management endpoint, `/roots/0`). */
  issuerRoot(): Promise<string>;
  /** What pebble printed (stdout and stderr), for failures. */
  output(): string;
}

export async function startPebble(o: {
  readonly httpPort: number;
  readonly names: readonly string[];
  /** Seconds each issued certificate is valid; default pebble's (5 years). */
  readonly validitySeconds?: number;
}): Promise<Pebble> {
  const pki = await makePki();
  const dns = startFakeDns();
  const resolve = (name: string, address: string) => {
    dns.set(name, "A", { records: [{ name, type: 1, ttl: 0, address }] });
    dns.set(name, "AAAA", { records: [] });
  };
  for (const n of o.names) resolve(n, "127.0.0.1");
  const own = await pki.issue("pebble", ["127.0.0.1", "localhost"]);
  const acmePort = freePort();
  const mgmtPort = freePort();
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${acmePort}`,
      managementListenAddress: `127.0.0.1:${mgmtPort}`,
      certificate: own.cert,
      privateKey: own.key,
      httpPort: o.httpPort,
      tlsPort: freePort(),
      ocspResponderURL: "",
      externalAccountBindingRequired: false,
      ...(o.validitySeconds !== undefined ? { certificateValidityPeriod: o.validitySeconds } : {}),
    },
  };
  await Deno.writeTextFile(`${pki.dir}/pebble.json`, JSON.stringify(config));
  const child = new Deno.Command("pebble", {
    args: ["-config", `${pki.dir}/pebble.json`, "-dnsserver", `127.0.0.1:${dns.port}`],
    env: { PEBBLE_VA_NOSLEEP: "1", PEBBLE_WFE_NONCEREJECT: "0", PEBBLE_AUTHZREUSE: "0" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const dec = new TextDecoder();
  const drain = (s: ReadableStream<Uint8Array>) =>
    s.pipeTo(new WritableStream({ write: (c) => void (out += dec.decode(c)) })).catch(() => {});
  const piped = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const client = Deno.createHttpClient({ caCerts: [pki.ca] });
  const directory = `https://127.0.0.1:${acmePort}/dir`;
  const close = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // already gone
    }
    await child.status;
    await piped;
    client.close();
    await dns.close();
    await pki.close();
  };
  // Up within 10 s, or the test fails with pebble's own words.
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const res = await fetch(directory, { client });
      await res.body?.cancel();
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await close();
      throw new Error(`pebble did not start: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    directory,
    caFile: pki.caFile,
    dns,
    resolve,
    async issuerRoot() {
      const res = await fetch(`https://127.0.0.1:${mgmtPort}/roots/0`, { client });
      return await res.text();
    },
    output: () => out,
    [Symbol.asyncDispose]: close,
  };
}
