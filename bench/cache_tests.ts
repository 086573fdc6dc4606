/**
 * The HTTP WG's cache test suite (github.com/http-tests/cache-tests, the one behind
 * cache-tests.fyi) against scalwsd as a caching reverse proxy. Not CI and not vendored: point
 * it at a local copy of the suite (Node.js runs the suite's own server and client).
 *
 *   deno task cache-tests --suite DIR [--id TEST-ID] [--out FILE] [--disk]
 *   CACHE_TESTS_DIR=DIR deno task cache-tests
 *
 * Starts the suite's origin server and scalwsd (from source, `cache: {}` in front of a pool
 * holding the server) on free loopback ports, runs the suite's CLI through scalwsd, writes its
 * result JSON (default `bench/out/cache-tests-<time>.json`) and prints the counts per result
 * kind (the suite's own classification) and every test that did not pass. `--id` runs one
 * test and prints the suite's dump of its requests and responses instead. `--disk` stores on
 * the disk tier only (a 1-byte memory tier), so every hit is read from disk. Exits 0 when the
 * suite ran, whatever it found.
 */

import { parseArgs } from "node:util";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const OUT_DIR = new URL("./out/", import.meta.url).pathname;

/** A free loopback port (closed again at once; the process started next takes it). */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Resolves once `url` answers at all, or throws after `ms`. */
async function waitForHttp(url: string, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const r = await fetch(url);
      await r.body?.cancel();
      return;
    } catch (err) {
      if (Date.now() > end) throw new Error(`${url} did not answer in ${ms} ms: ${err}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * `disk`: the disk tier's directory, with a memory tier of 1 byte, so that every answer is
 * stored on disk only and every hit is read from there.
 */
function scalwsdConfig(port: number, origin: number, disk: string | null): string {
  return `server:
  listeners:
    - name: http
      address: "127.0.0.1:${port}"
  access_log: off${disk === null ? "" : `\n  cache: { max_size: 1, path: "${disk}" }`}
upstreams:
  suite:
    members:
      - { address: "127.0.0.1:${origin}" }
tenants:
  - name: cache-tests
    applications:
      - name: suite
        domains: ["127.0.0.1"]
        runtime: { type: proxy, upstream: { pool: suite } }
        cache: { store_set_cookie: keep, stale_if_disconnected: 1h }
`;
}

/**
 * Node module printing the counts per result kind and the tests that did not pass, with the
 * suite's own `determineTestResult` (dependencies honoured, as cache-tests.fyi shows them).
 */
const SUMMARY = `
import fs from "node:fs";
const [suite, file] = process.argv.slice(1);
const { default: tests } = await import(suite + "/tests/index.mjs");
const { determineTestResult, resultTypes } = await import(suite + "/test-engine/lib/results.mjs");
const results = JSON.parse(fs.readFileSync(file, "utf8"));
const kinds = Object.keys(resultTypes);
const counts = {};
const notPassed = [];
for (const s of tests) for (const t of s.tests) {
  const kind = kinds.find((k) => resultTypes[k] === determineTestResult(tests, t.id, results));
  counts[kind] = (counts[kind] ?? 0) + 1;
  if (!["pass", "yes", "no", "untested", "dependency_fail"].includes(kind)) {
    const detail = Array.isArray(results[t.id]) ? results[t.id][1] : "";
    notPassed.push(kind.padEnd(14) + (t.kind ?? "required").padEnd(9) + t.id + "  " + detail);
  }
}
console.log(JSON.stringify(counts));
for (const line of notPassed) console.log("  " + line);
`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      suite: { type: "string" },
      id: { type: "string" },
      out: { type: "string" },
      disk: { type: "boolean" },
    },
  });
  const given = values.suite ?? Deno.env.get("CACHE_TESTS_DIR");
  if (given === undefined) {
    console.error("cache-tests: give the suite's directory with --suite DIR or CACHE_TESTS_DIR");
    return 2;
  }
  let suite: string;
  try {
    suite = Deno.realPathSync(given);
    Deno.statSync(`${suite}/test-engine/cli.mjs`);
  } catch {
    suite = given;
    console.error(`cache-tests: ${suite}/test-engine/cli.mjs not found (is it the suite?)`);
    return 2;
  }
  try {
    Deno.statSync(`${suite}/node_modules/undici`);
  } catch {
    console.error("cache-tests: no undici in the suite (npm i undici): the interim-* tests fail");
  }
  const dir = Deno.makeTempDirSync({ prefix: "scalwsd-cache-tests-" });
  const origin = freePort();
  const port = freePort();
  const disk = values.disk === true ? `${dir}/cache` : null;
  Deno.writeTextFileSync(`${dir}/scalwsd.yaml`, scalwsdConfig(port, origin, disk));
  const server = new Deno.Command("node", {
    args: ["test-engine/server/server.mjs"],
    cwd: suite,
    env: {
      npm_package_config_protocol: "http",
      npm_package_config_port: String(origin),
      npm_package_config_pidfile: `${dir}/server.pid`,
    },
    stdout: "null",
    stderr: "null",
  }).spawn();
  const scalwsd = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, "run", "--config", `${dir}/scalwsd.yaml`],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    await waitForHttp(`http://127.0.0.1:${origin}/`, 10_000);
    await waitForHttp(`http://127.0.0.1:${port}/`, 30_000);
    const started = Date.now();
    const cli = await new Deno.Command("node", {
      args: ["--no-warnings", "test-engine/cli.mjs"],
      cwd: suite,
      // The CLI reads npm's config variables (`npm run cli --base=... --id=...`).
      env: {
        npm_config_base: `http://127.0.0.1:${port}`,
        npm_config_id: values.id ?? "",
        npm_package_config_id: values.id ?? "",
      },
      stdout: values.id === undefined ? "piped" : "inherit",
      stderr: "inherit",
    }).output();
    if (!cli.success) {
      console.error(`cache-tests: the suite's client exited with ${cli.code}`);
      return 1;
    }
    if (values.id !== undefined) return 0;
    Deno.mkdirSync(OUT_DIR, { recursive: true });
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    const out = values.out ?? `${OUT_DIR}cache-tests-${stamp}.json`;
    Deno.writeFileSync(out, cli.stdout);
    console.log(`results: ${out} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    const summary = await new Deno.Command("node", {
      args: ["--input-type=module", "-e", SUMMARY, suite, out],
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    return summary.success ? 0 : 1;
  } finally {
    for (const p of [scalwsd, server]) {
      try {
        p.kill("SIGTERM");
      } catch { /* already gone */ }
      await p.status;
    }
    Deno.removeSync(dir, { recursive: true });
  }
}

Deno.exit(await main());
