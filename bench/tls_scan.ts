/**
 * `deno task tls-scan`: testssl.sh and sslscan against a scalwsd TLS listener with its shipped
 * defaults and against nginx beside it, both with an ECDSA P-256 and an RSA-2048 certificate for
 * the same name (bench.test), TLS 1.2 and 1.3, session cache and tickets on (nginx 1.22's defaults
 * otherwise: `ssl_ciphers HIGH:!aNULL:!MD5`, `ssl_prefer_server_ciphers off`). Prints the findings
 * of each side by side, where they differ first; keeps the full outputs in bench/out/tls_scan/.
 * Not part of the test suite: a testssl.sh run takes minutes.
 *
 *     deno task tls-scan [--only scalwsd|nginx] [--keep]
 */
import { scalwsYaml } from "../tests/_support/yaml.ts";
import { TLS_HOST } from "./configs.ts";
import { findExecutable, freePorts, waitListening, withProcs } from "./procs.ts";
import { prepareTlsDir, spawnNginx, spawnScalwsd, tlsNginxConf } from "./tls_bench_servers.ts";
const OUT_DIR = new URL("./out/tls_scan/", import.meta.url).pathname;

type Server = "scalwsd" | "nginx";

/** The testssl.sh findings shown first, in this order (ids of its JSON output). */
const KEY_IDS = [
  "SSLv2",
  "SSLv3",
  "TLS1",
  "TLS1_1",
  "TLS1_2",
  "TLS1_3",
  "ALPN",
  "ALPN_HTTP2",
  "cipher_order",
  "FS",
  "FS_ECDHE_curves",
  "cert_keySize",
  "TLS_session_ticket",
  "sessionresumption_ticket",
  "sessionresumption_ID",
  "fallback_SCSV",
  "secure_renego",
  "secure_client_renego",
  "heartbleed",
  "ROBOT",
  "CRIME_TLS",
  "BEAST",
  "LUCKY13",
  "SWEET32",
  "RC4",
];

interface Finding {
  readonly id: string;
  readonly severity: string;
  readonly finding: string;
}

/** nginx 1.22's defaults but for both certificates, session cache and tickets on. */
function nginxConf(dir: string, port: number): string {
  return tlsNginxConf(
    dir,
    port,
    ["ecdsa", "rsa"],
    `    ssl_session_cache shared:scan:10m;
    ssl_session_tickets on;
    location / { default_type text/plain; return 200 "ok\\n"; }`,
  );
}

function scalwsdConf(dir: string, port: number): string {
  return scalwsYaml({
    server: {
      listeners: [{
        name: "https",
        address: `127.0.0.1:${port}`,
        tls: {
          certificates: [
            { cert: `${dir}/ecdsa.pem`, key: `${dir}/ecdsa.key` },
            { cert: `${dir}/rsa.pem`, key: `${dir}/rsa.key` },
          ],
        },
      }],
      admin: undefined,
    },
    apps: [{ name: "scan", domains: [TLS_HOST], runtime: { type: "respond", body: "ok\n" } }],
  });
}

/** testssl.sh's findings (its JSON file), by id; the last of equal ids wins. */
function readTestssl(file: string): Map<string, Finding> {
  const out = new Map<string, Finding>();
  const list = JSON.parse(Deno.readTextFileSync(file)) as Finding[];
  for (const f of list) out.set(f.id, f);
  return out;
}

/** sslscan's accepted ciphers, preferred first, and its other lines of interest. */
function readSslscan(text: string): string[] {
  // deno-lint-ignore no-control-regex
  const plain = text.replace(/\x1b\[[0-9;]*m/g, "");
  return plain.split("\n").filter((l) =>
    /^(Preferred|Accepted)\s|enabled|disabled|Compression|Heartbleed|Renegotiation|Fallback/
      .test(l.trim())
  ).map((l) => l.trim());
}

async function main(): Promise<void> {
  const only = Deno.args.includes("--only") ? Deno.args[Deno.args.indexOf("--only") + 1] : "";
  const keep = Deno.args.includes("--keep");
  const servers: Server[] = only === "" ? ["scalwsd", "nginx"] : [only as Server];
  const bin = {
    openssl: findExecutable("openssl"),
    nginx: findExecutable("nginx"),
    testssl: findExecutable("testssl") ?? findExecutable("testssl.sh"),
    sslscan: findExecutable("sslscan"),
  };
  for (const [name, path] of Object.entries(bin)) {
    if (path === undefined) throw new Error(`tls-scan needs ${name} on the PATH`);
  }
  await Deno.mkdir(OUT_DIR, { recursive: true });
  const [ps, pn] = freePorts(2);
  const ports: Record<Server, number> = { scalwsd: ps, nginx: pn };
  await withProcs("tls-scan", async (procs, dir) => {
    await prepareTlsDir(bin.openssl!, dir);
    if (servers.includes("scalwsd")) await spawnScalwsd(procs, dir, scalwsdConf(dir, ps));
    if (servers.includes("nginx")) await spawnNginx(procs, bin.nginx!, dir, nginxConf(dir, pn));
    for (const s of servers) await waitListening(ports[s]);
    const found: Partial<Record<Server, Map<string, Finding>>> = {};
    const scans: Partial<Record<Server, string[]>> = {};
    for (const s of servers) {
      const target = `${TLS_HOST}:${ports[s]}`;
      const json = `${OUT_DIR}${s}.testssl.json`;
      await Deno.remove(json).catch(() => {});
      console.log(`tls-scan: testssl.sh ${s} (a few minutes)`);
      const t = await procs.output("testssl", bin.testssl!, [
        "--quiet",
        "--color",
        "0",
        "--warnings",
        "off",
        "--ip",
        "127.0.0.1",
        "--jsonfile",
        json,
        target,
      ]);
      await Deno.writeTextFile(`${OUT_DIR}${s}.testssl.txt`, t.stdout + t.stderr);
      found[s] = readTestssl(json);
      console.log(`tls-scan: sslscan ${s}`);
      const sc = await procs.output("sslscan", bin.sslscan!, [
        "--no-colour",
        `--sni-name=${TLS_HOST}`,
        `127.0.0.1:${ports[s]}`,
      ]);
      await Deno.writeTextFile(`${OUT_DIR}${s}.sslscan.txt`, sc.stdout + sc.stderr);
      scans[s] = readSslscan(sc.stdout);
    }
    report(servers, found, scans);
  }, { keep });
}

function report(
  servers: Server[],
  found: Partial<Record<Server, Map<string, Finding>>>,
  scans: Partial<Record<Server, string[]>>,
): void {
  const cell = (s: Server, id: string) => {
    const f = found[s]?.get(id);
    return f === undefined ? "-" : `${f.finding} (${f.severity})`.replaceAll("|", "/");
  };
  const ids = new Set<string>(KEY_IDS);
  for (const s of servers) for (const id of found[s]?.keys() ?? []) ids.add(id);
  const differ = [...ids].filter((id) =>
    !KEY_IDS.includes(id) && servers.length > 1 && cell(servers[0], id) !== cell(servers[1], id)
  );
  console.log(`\n| testssl.sh id | ${servers.join(" | ")} |`);
  console.log(`| --- | ${servers.map(() => "---").join(" | ")} |`);
  for (const id of [...KEY_IDS, ...differ]) {
    console.log(`| ${id} | ${servers.map((s) => cell(s, id)).join(" | ")} |`);
  }
  for (const s of servers) {
    console.log(`\nsslscan ${s}:`);
    for (const l of scans[s] ?? []) console.log(`  ${l}`);
  }
  console.log(`\nfull outputs: ${OUT_DIR}`);
}

if (import.meta.main) await main();
