/**
 * TLS test clients with a chosen SNI name on 127.0.0.1: curl (HTTP/1.1 and HTTP/2), raw
 * node:tls exchanges and `openssl s_client` handshakes. Loopback only.
 */
import http2 from "node:http2";
import tls from "node:tls";
import { X509Certificate } from "node:crypto";
import { waitUntil } from "./wait.ts";

export interface CurlResult {
  readonly status: number;
  /** `1.1` or `2`. */
  readonly version: string;
  readonly body: string;
  readonly headers: string;
}

/**
 * `curl` to `https://NAME:PORT/PATH` with NAME resolved to 127.0.0.1 (so SNI is NAME);
 * `extra` are more curl arguments (`--http2`, `-H`, `--data`, ...).
 */
export async function curl(
  port: number,
  ca: string,
  name: string,
  path: string,
  extra: string[] = [],
): Promise<CurlResult> {
  const out = await new Deno.Command("curl", {
    args: [
      "-s",
      "-S",
      "--max-time",
      "5",
      "--cacert",
      ca,
      "--resolve",
      `${name}:${port}:127.0.0.1`,
      "-D",
      "-",
      "-w",
      "\n%{http_version} %{http_code}",
      ...extra,
      `https://${name}:${port}${path}`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const nl = text.lastIndexOf("\n");
  const [version, code] = text.slice(nl + 1).split(" ");
  const rest = text.slice(0, nl);
  const split = rest.indexOf("\r\n\r\n");
  return {
    status: Number(code),
    version,
    headers: split < 0 ? rest : rest.slice(0, split),
    body: split < 0 ? "" : rest.slice(split + 4),
  };
}

/** A node:http2 session to 127.0.0.1:`port`, SNI and `:authority` `servername`. */
export function h2Session(
  port: number,
  ca: string,
  servername = "a.test",
): http2.ClientHttp2Session {
  return http2.connect(`https://${servername}:${port}`, {
    ca,
    host: "127.0.0.1",
    servername,
  } as http2.SecureClientSessionOptions);
}

/**
 * The SHA-256 fingerprint of the certificate presented for `servername` (signed by `ca`, its
 * names not checked).
 */
export function presented(port: number, ca: string, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({
      host: "127.0.0.1",
      port,
      ca,
      servername,
      checkServerIdentity: () => undefined,
    });
    s.once("secureConnect", () => {
      const fp = s.getPeerCertificate().fingerprint256;
      s.end();
      s.once("close", () => resolve(fp));
    });
    s.once("error", reject);
  });
}

/**
 * One GET (`connection: close`) on a new TLS connection with SNI `servername`: the fingerprint of
 * the certificate presented and the status; rejects on an error or after 10 s.
 */
export function requestOnce(
  port: number,
  ca: string,
  servername = "a.test",
): Promise<{ fp: string; status: number }> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: "127.0.0.1", port, ca, servername });
    let fp = "";
    let data = "";
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error("no answer within 10 s"));
    }, 10_000);
    s.setEncoding("latin1");
    s.once("secureConnect", () => {
      fp = s.getPeerCertificate().fingerprint256;
      s.write(`GET / HTTP/1.1\r\nhost: ${servername}\r\nconnection: close\r\n\r\n`);
    });
    s.on("data", (d: string) => (data += d));
    s.once("end", () => {
      clearTimeout(timer);
      resolve({ fp, status: Number(data.split(" ")[1]) });
    });
    s.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/**
 * Clients that each make one request on a new TLS connection after another (`requestOnce`)
 * while a test changes certificates under them: how many were answered, and every failure
 * (with `context()`, what the test was doing). Bounded: `max` requests per client.
 */
export class ReconnectLoad {
  done = 0;
  readonly failures: string[] = [];
  #running = true;
  readonly #clients: Promise<void>[];

  constructor(
    port: number,
    ca: string,
    o: { readonly clients?: number; readonly max?: number; readonly context?: () => string } = {},
  ) {
    const note = (m: string) => o.context === undefined ? m : `${m} (${o.context()})`;
    const client = async () => {
      for (let i = 0; this.#running && i < (o.max ?? 5000); i++) {
        try {
          const r = await requestOnce(port, ca);
          if (r.status !== 200) this.failures.push(note(`status ${r.status}`));
          this.done++;
        } catch (err) {
          this.failures.push(note(String(err)));
        }
      }
    };
    this.#clients = Array.from({ length: o.clients ?? 2 }, client);
  }

  /** Waits until `n` more requests were answered (20 s at most). */
  async more(n: number): Promise<void> {
    const before = this.done;
    await waitUntil(() => this.done >= before + n, { what: `${n} requests`, timeoutMs: 20_000 });
  }

  /** Stops the clients after their current request. */
  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#clients);
  }
}

/** The SHA-256 fingerprint of a PEM certificate file, as `presented` reports it. */
export async function fingerprint(certFile: string): Promise<string> {
  return new X509Certificate(await Deno.readTextFile(certFile)).fingerprint256;
}

/** A kept-alive HTTP/1.1 connection over TLS with a chosen SNI name. */
export class TlsClient implements AsyncDisposable {
  private buf = "";
  private waiting: (() => void) | null = null;
  ended = false;
  private constructor(private readonly socket: tls.TLSSocket) {
    socket.setEncoding("latin1");
    socket.on("data", (d: string) => {
      this.buf += d;
      this.waiting?.();
    });
    socket.on("end", () => {
      this.ended = true;
      this.waiting?.();
    });
    socket.on("error", () => {
      this.ended = true;
      this.waiting?.();
    });
  }

  static connect(port: number, ca: string, servername: string): Promise<TlsClient> {
    return new Promise((resolve, reject) => {
      const s = tls.connect({
        host: "127.0.0.1",
        port,
        ca,
        servername,
        ALPNProtocols: ["http/1.1"],
      });
      s.once("secureConnect", () => resolve(new TlsClient(s)));
      s.once("error", reject);
    });
  }

  /** Sends a GET for `host` and reads one response with a Content-Length body. */
  async get(host: string, path = "/"): Promise<{ status: number; body: string }> {
    this.socket.write(`GET ${path} HTTP/1.1\r\nhost: ${host}\r\n\r\n`);
    const deadline = Date.now() + 5000;
    for (;;) {
      const end = this.buf.indexOf("\r\n\r\n");
      if (end >= 0) {
        const head = this.buf.slice(0, end);
        const m = /content-length: *(\d+)/i.exec(head);
        const len = m ? Number(m[1]) : 0;
        if (this.buf.length >= end + 4 + len) {
          const body = this.buf.slice(end + 4, end + 4 + len);
          this.buf = this.buf.slice(end + 4 + len);
          return { status: Number(head.split(" ")[1]), body };
        }
      }
      if (this.ended) throw new Error(`connection ended: ${JSON.stringify(this.buf)}`);
      if (Date.now() > deadline) throw new Error("no response within 5 s");
      await new Promise<void>((r) => {
        this.waiting = r;
        setTimeout(r, 50);
      });
      this.waiting = null;
    }
  }

  /** Waits (at most `ms`) for the server to close the connection; true when it did. */
  async closedWithin(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.ended && Date.now() < deadline) {
      await new Promise<void>((r) => {
        this.waiting = r;
        setTimeout(r, 20);
      });
      this.waiting = null;
    }
    return this.ended;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.destroyed) return resolve();
      this.socket.once("close", () => resolve());
      this.socket.destroy();
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** What `openssl s_client -brief` reports of one handshake. */
export interface Handshake {
  /** `Signature type:` (ECDSA, RSA-PSS, RSA), "" when the handshake failed. */
  readonly signature: string;
  /** `Protocol version:`. */
  readonly version: string;
  /** The TLS alert number the client got, 0 for none. */
  readonly alert: number;
  readonly text: string;
}

/**
 * One `openssl s_client` handshake to `port` on 127.0.0.1 (or `[address, port]`) with SNI `name`
 * (null: none), trusting the CA file `ca`; `args` are more s_client arguments.
 */
export async function handshake(
  at: number | [string, number],
  ca: string,
  name: string | null,
  args: string[] = [],
): Promise<Handshake> {
  const [address, port] = typeof at === "number" ? ["127.0.0.1", at] : at;
  const out = await new Deno.Command("openssl", {
    args: [
      "s_client",
      "-brief",
      "-connect",
      `${address}:${port}`,
      ...(name === null ? ["-noservername"] : ["-servername", name]),
      "-CAfile",
      ca,
      ...args,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return {
    signature: /^Signature type: (\S+)/m.exec(text)?.[1] ?? "",
    version: /^Protocol version: (\S+)/m.exec(text)?.[1] ?? "",
    alert: Number(/SSL alert number (\d+)/.exec(text)?.[1] ?? 0),
    text,
  };
}
