/**
 * The admin API's listeners: the admin socket or port and the unauthenticated metrics listener,
 * opened at start from the configuration (or the controller's per-instance overrides); a reload
 * does not change them (it warns when the file does). The API itself is `app.ts`.
 *
 * @module
 */

import { createAdminApp } from "./app.ts";
import { metricsHandler, warmingHandler } from "./metrics_app.ts";
import { log } from "../src/observe/mod.ts";
import type { AdminTarget } from "./target.ts";
import { RemoteAdmin } from "./remote_admin.ts";
import { claimSocketPath } from "./socket_claim.ts";

/** Per-instance settings under the controller, which replace the configuration's. */
export interface AdminOverrides {
  /** The instance's own admin socket. */
  readonly socket?: string;
  /** The instance's own metrics listener (the controller reads `/metrics`, `/readyz` there). */
  readonly metrics?: { readonly hostname: string; readonly port: number };
  /** Leave out the listeners of which a host can have one only (`admin.http`, `admin.remote`). */
  readonly skipHostListeners?: boolean;
  /** The metrics listener bound while the generation was prepared; used instead of `metrics`. */
  readonly early?: EarlyMetricsListener;
}

/**
 * An instance's metrics listener bound before its generation is prepared, so that the
 * controller sees it `warming` (ADR-0035); `AdminListeners.start` then hands it the server, on
 * the same socket.
 */
export class EarlyMetricsListener {
  #handler: (req: Request) => Response;
  readonly server: Deno.HttpServer<Deno.NetAddr>;

  constructor(address: { readonly hostname: string; readonly port: number }, generation: number) {
    this.#handler = warmingHandler(generation);
    this.server = named(`metrics listener ${address.hostname}:${address.port}`, () =>
      Deno.serve(
        { hostname: address.hostname, port: address.port, onListen() {} },
        (req) => this.#handler(req),
      ));
    log("info", "metrics_listening", {
      address: `${this.server.addr.hostname}:${this.server.addr.port}`,
      state: "warming",
    });
  }

  /** From now on the listener answers for `target`. */
  serve(target: AdminTarget): void {
    this.#handler = metricsHandler(target);
  }

  /** Closes it (a generation that could not be prepared). */
  async close(): Promise<void> {
    await this.server.shutdown();
  }
}

/** Runs a bind, naming what it binds in the error (`admin socket /run/x.sock: ...`). */
function named<T>(what: string, bind: () => T): T {
  try {
    return bind();
  } catch (err) {
    throw new Error(`${what}: ${(err as Error).message ?? err}`, { cause: err });
  }
}

/** The admin socket, the metrics listener and (optionally) the loopback console listener. */
export class AdminListeners {
  private readonly servers: Deno.HttpServer[] = [];
  private remote: RemoteAdmin | null = null;
  /** Bound addresses for tests: `metrics`, `http`. */
  readonly bound = new Map<string, Deno.NetAddr>();

  constructor(
    private readonly server: AdminTarget,
    private readonly overrides: AdminOverrides = {},
  ) {}

  async start(): Promise<void> {
    const cfg = this.server.config.server;
    const app = createAdminApp(this.server);
    const fetch = (req: Request) => app.fetch(req);
    const socketPath = this.overrides.socket ?? cfg.admin.socket;
    if (socketPath) {
      const path = socketPath;
      const at = this.overrides.socket === undefined ? "server.admin.socket" : undefined;
      await claimSocketPath(path).catch((err) => {
        throw this.bindError(`admin socket ${path}`, err, at);
      });
      const s = this.named(
        `admin socket ${path}`,
        () => Deno.serve({ path, onListen() {} }, fetch),
        at,
      );
      await Deno.chmod(path, 0o600);
      this.servers.push(s);
      log("info", "admin_listening", { socket: path });
    }
    const metrics = this.overrides.metrics ??
      (cfg.metrics.address
        ? { hostname: cfg.metrics.hostname!, port: cfg.metrics.port! }
        : undefined);
    const early = this.overrides.early;
    if (early) {
      early.serve(this.server);
      this.servers.push(early.server);
      this.bound.set("metrics", early.server.addr);
    } else if (metrics) {
      const s = this.named(
        `metrics listener ${metrics.hostname}:${metrics.port}`,
        () =>
          Deno.serve(
            { hostname: metrics.hostname, port: metrics.port, onListen() {} },
            metricsHandler(this.server),
          ),
        this.overrides.metrics === undefined ? "server.metrics.address" : undefined,
      );
      this.servers.push(s);
      this.bound.set("metrics", s.addr);
      log("info", "metrics_listening", { address: `${s.addr.hostname}:${s.addr.port}` });
    }
    const skip = this.overrides.skipHostListeners === true;
    if (skip && (cfg.admin.remote || cfg.admin.http)) {
      log("warn", "admin_listeners_skipped", {
        reason: "one per host; not started by instances under the controller",
      });
    }
    if (cfg.admin.remote && !skip) {
      const r = cfg.admin.remote;
      const subjects = new WeakMap<Request, string>();
      const remoteApp = createAdminApp(
        this.server,
        (req) => subjects.get(req) ?? "certificate:unknown",
      );
      this.remote = new RemoteAdmin({
        hostname: r.hostname,
        port: r.port,
        cert: await Deno.readTextFile(r.tls.cert),
        key: await Deno.readTextFile(r.tls.key),
        clientCa: await Deno.readTextFile(r.tls.client_ca),
      }, (req, who) => {
        subjects.set(req, who);
        return remoteApp.fetch(req);
      });
      await this.remote.start().catch((err) => {
        throw this.bindError(
          `remote admin listener ${r.address}`,
          err,
          "server.admin.remote.address",
        );
      });
      this.bound.set("remote", { transport: "tcp", hostname: r.hostname, port: this.remote.port });
      log("info", "admin_remote_listening", { address: `${r.hostname}:${this.remote.port}` });
    }
    if (cfg.admin.http && !skip) {
      const h = cfg.admin.http;
      const peers = new WeakMap<Request, string>();
      const httpApp = createAdminApp(this.server, () => "http", {
        peerOf: (req) => peers.get(req),
        readOnly: !h.writes,
      });
      const s = this.named(
        `admin http listener ${h.address}`,
        () =>
          Deno.serve({ hostname: h.hostname, port: h.port, onListen() {} }, (req, info) => {
            const a = info.remoteAddr;
            peers.set(
              req,
              a.hostname.includes(":") ? `[${a.hostname}]:${a.port}` : `${a.hostname}:${a.port}`,
            );
            return httpApp.fetch(req);
          }),
        "server.admin.http.address",
      );
      this.servers.push(s);
      this.bound.set("http", s.addr);
      log("info", "admin_http_listening", { address: `${s.addr.hostname}:${s.addr.port}` });
    }
  }

  /**
   * `what: reason`, and when the listener is the file's (`at`, its key path), placed where the
   * file writes it: `FILE:LINE:COLUMN: server.metrics.address: metrics listener ...: reason`.
   */
  private bindError(what: string, err: unknown, at?: string): Error {
    const text = `${what}: ${(err as Error).message ?? err}`;
    if (at === undefined) return new Error(text, { cause: err });
    const problem = `${at}: ${text}`;
    return new Error(this.server.placed?.(problem) ?? problem, { cause: err });
  }

  private named<T>(what: string, bind: () => T, at?: string): T {
    try {
      return bind();
    } catch (err) {
      throw this.bindError(what, err, at);
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.shutdown()));
    await this.remote?.stop();
    const sock = this.overrides.socket ?? this.server.config.server.admin.socket;
    if (sock) await Deno.remove(sock).catch(() => {});
  }
}
