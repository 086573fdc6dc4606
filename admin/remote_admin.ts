/**
 * The remote admin listener: the admin API over HTTPS with a required client certificate signed
 * by `client_ca`. Deno's own TLS server cannot ask for client certificates, so this one listener
 * uses node:https; it is off the request path, where its speed does not matter.
 */
import https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import { Buffer } from "node:buffer";
import { handshakeFailed } from "../src/server/mod.ts";

/** Largest body read from a remote admin request (the API refuses bigger ones with 413). */
const MAX_BODY = 2 * 1024 * 1024 + 1;

export interface RemoteAdminOptions {
  readonly hostname: string;
  readonly port: number;
  /** PEM texts. */
  readonly cert: string;
  readonly key: string;
  readonly clientCa: string;
}

/** The subject of the verified client certificate, for audit lines (`CN=ops,O=acme`). */
function subjectOf(req: IncomingMessage): string {
  const sock = req.socket as TLSSocket;
  const cert = sock.getPeerCertificate?.();
  const subject = cert?.subject as unknown as Record<string, string> | undefined;
  if (!subject) return "certificate:unknown";
  return Object.entries(subject).map(([k, v]) => `${k}=${v}`).join(",");
}

/** The client's address of a socket that failed its handshake (Deno keeps it on the TCP side). */
function remoteOf(socket: TLSSocket): string {
  const s = socket as TLSSocket & { _parent?: { remoteAddress?: string }; _handle?: unknown };
  return s._parent?.remoteAddress ?? "";
}

export class RemoteAdmin {
  private server: https.Server | null = null;
  /** The bound port (useful with port 0). */
  port = 0;

  constructor(
    private readonly options: RemoteAdminOptions,
    private readonly fetch: (req: Request, who: string) => Promise<Response> | Response,
  ) {}

  start(): Promise<void> {
    const o = this.options;
    const server = https.createServer({
      cert: o.cert,
      key: o.key,
      ca: o.clientCa,
      requestCert: true,
      rejectUnauthorized: true,
    }, (req, res) => {
      this.serve(req, res).catch(() => {
        res.statusCode = 500;
        res.end();
      });
    });
    // A refused client certificate (unknown CA, X.509 v1, expired) ends in the handshake; log
    // it, rate-limited like every listener's failed handshakes. Deno 2.9.6's node:tls reports
    // only "socket hang up" (ECONNRESET) there, so the line says what it usually means.
    server.on("tlsClientError", (err: Error, socket: TLSSocket) => {
      const code = (err as Error & { code?: string }).code;
      const reason = code === "ECONNRESET"
        ? "handshake failed: client certificate missing, not signed by client_ca, expired or " +
          "not X.509 v3 (the TLS library gives no detail)"
        : err;
      handshakeFailed({
        listener: "admin.remote",
        peer: socket.remoteAddress ?? remoteOf(socket),
        sni: (socket as TLSSocket & { servername?: string }).servername || null,
        err: reason,
      });
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(o.port, o.hostname, () => {
        const addr = server.address();
        this.port = typeof addr === "object" && addr !== null ? addr.port : o.port;
        resolve();
      });
    });
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sock = req.socket as TLSSocket;
    if (!sock.authorized) {
      res.statusCode = 401;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ error: "a client certificate signed by client_ca is required" }));
      return;
    }
    // Read before the body: a body cut short below leaves the request without its socket.
    const who = subjectOf(req);
    const chunks: Buffer[] = [];
    let size = 0;
    // A declared length over the cap is answered (413) without reading the body.
    const declared = Number(req.headers["content-length"]);
    if (!(declared > MAX_BODY)) {
      for await (const chunk of req) {
        size += (chunk as Buffer).length;
        if (size > MAX_BODY) break;
        chunks.push(chunk as Buffer);
      }
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (v === undefined) continue;
      for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
    }
    if (size > MAX_BODY) headers.set("content-length", String(size));
    const method = req.method ?? "GET";
    const body = method === "GET" || method === "HEAD" ? undefined : Buffer.concat(chunks);
    const request = new Request(`https://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, {
      method,
      headers,
      body,
    });
    const response = await this.fetch(request, who);
    res.statusCode = response.status;
    response.headers.forEach((v, k) => res.setHeader(k, v));
    res.end(Buffer.from(await response.arrayBuffer()));
  }

  stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (s === null) return Promise.resolve();
    return new Promise((resolve) => {
      s.close(() => resolve());
      s.closeAllConnections?.();
    });
  }
}
