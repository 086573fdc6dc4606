/**
 * The TLS scenarios' pieces that are not configuration text: their certificates (made with
 * openssl for every bench run), which listener a scenario loads, and h2load's arguments.
 */

import { type CertKind, TLS_HOST, type TlsLayout } from "./configs.ts";
import type { ServerName, TlsLoad } from "./scenarios.ts";

/** How long a certificate of the bench lives (days). */
const CERT_DAYS = 30;

/**
 * openssl's arguments for a self-signed X.509 v3 certificate of `kind` (RSA-2048 or ECDSA
 * P-256) naming {@link TLS_HOST} as its subject alternative name, key unencrypted (PKCS#8), into
 * `${dir}/${kind}.pem` and `${dir}/${kind}.key`.
 */
export function certArgs(kind: CertKind, dir: string): string[] {
  const key = kind === "rsa" ? ["rsa:2048"] : ["ec", "-pkeyopt", "ec_paramgen_curve:P-256"];
  return [
    "req",
    "-x509",
    "-newkey",
    ...key,
    "-nodes",
    "-keyout",
    `${dir}/${kind}.key`,
    "-out",
    `${dir}/${kind}.pem`,
    "-days",
    String(CERT_DAYS),
    "-subj",
    `/CN=${TLS_HOST}`,
    "-addext",
    `subjectAltName=DNS:${TLS_HOST}`,
  ];
}

/** Makes both certificates in `dir` (created if missing) with `openssl`; throws on a failure. */
export async function makeCertificates(openssl: string, dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  for (const kind of ["rsa", "ecdsa"] as const) {
    const out = await new Deno.Command(openssl, {
      args: certArgs(kind, dir),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (out.code !== 0) {
      throw new Error(
        `openssl could not make the ${kind} certificate: ${new TextDecoder().decode(out.stderr)}`,
      );
    }
  }
}

/**
 * The port a TLS load goes to on `server`: scalwsd's listener for the certificate kind; nginx's
 * server with resumption on, or off for full handshakes (as the target asks: nginx's
 * resumption turned off too).
 */
export function tlsPort(t: TlsLayout, server: ServerName, load: TlsLoad): number {
  if (server === "scalwsd") return t.scalwsd[load.cert];
  if (server === "nginx") {
    return load.connection === "full" ? t.nginxNoResume[load.cert] : t.nginx[load.cert];
  }
  throw new Error(`the TLS scenarios run on scalwsd and nginx only, not ${server}`);
}

/** What one h2load invocation does. */
export interface H2loadRun {
  port: number;
  load: TlsLoad;
  clients: number;
  /** h2load threads (at most `clients`). */
  threads: number;
  /** Either a duration in seconds (keep-alive) or a request count (new connections). */
  seconds?: number;
  requests?: number;
  /** Per-request times go there (`--log-file`). */
  logFile?: string;
}

/**
 * h2load's arguments. The URI names {@link TLS_HOST} (SNI and Host, as a browser sends them)
 * and `--connect-to` sends it to loopback. A new connection per request is `Connection: close`
 * (HTTP/1.1) with a request count: h2load 1.52 with `-D` waits forever for a client that reconnects.
 * `-N` ends a connection that hears nothing for 10 s, so that a stuck one cannot hang the bench.
 */
export function h2loadArgs(r: H2loadRun): string[] {
  const args = [`-t${Math.max(1, Math.min(r.threads, r.clients))}`, `-c${r.clients}`, "-m1"];
  if (!r.load.h2) args.push("--h1");
  if (r.load.connection === "keep-alive") {
    if (r.seconds === undefined) throw new Error("a keep-alive h2load run needs a duration");
    args.push(`-D${r.seconds}`);
  } else {
    if (r.requests === undefined) throw new Error("a new-connection h2load run needs a count");
    if (r.load.connection === "full" && r.requests !== r.clients) {
      throw new Error("a full-handshake h2load run makes one request per client");
    }
    // HTTP/2 has no Connection header: a client's one connection ends with its one request.
    if (r.load.h2 && r.load.connection === "resume") {
      throw new Error("a new connection per request over HTTP/2 is the full-handshake load");
    }
    args.push(`-n${r.requests}`);
    if (!r.load.h2) args.push("-H", "Connection: close");
  }
  args.push("-N10s");
  if (r.logFile !== undefined) args.push(`--log-file=${r.logFile}`);
  args.push(`--connect-to=127.0.0.1:${r.port}`, `https://${TLS_HOST}:${r.port}/`);
  return args;
}

/**
 * The request count of a `resume` run meant to last about `seconds` at `rate` req/s (from the
 * previous run), a multiple of `clients` so that every client makes as many; at least 4 each.
 */
export function resumeCount(rate: number | undefined, seconds: number, clients: number): number {
  const wanted = rate === undefined || !(rate > 0) ? clients * 8 : rate * seconds;
  return Math.max(4, Math.ceil(wanted / clients)) * clients;
}
