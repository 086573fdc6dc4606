import type { AccessLog } from "../observe/access_log.ts";
import type { Metrics } from "../observe/families.ts";
import { Exchange } from "../pipeline/exchange.ts";
import { hostName } from "../pipeline/hosts.ts";
import { normalizePath } from "../pipeline/path.ts";
import { clientAddress } from "../pipeline/client_ip.ts";
import { pathStart, urlAuthority } from "../pipeline/url.ts";
import { log } from "../observe/log.ts";
import { plain } from "./plain.ts";
import type { Generation } from "./generation.ts";

/**
 * The request path: generation -> host -> route -> handler. Holds the current generation; a
 * request reads it once and keeps it.
 */
export class Dispatcher {
  /** Replaced whole on reload. */
  current: Generation;
  /** When set, responses carry `Connection: close` (draining). */
  draining = false;

  constructor(
    gen: Generation,
    private readonly metrics: Metrics,
    private readonly log: AccessLog,
  ) {
    this.current = gen;
  }

  handle(
    req: Request,
    info: Deno.ServeHandlerInfo<Deno.Addr>,
    secure: boolean,
  ): Response | Promise<Response> {
    const gen = this.current;
    let authority = req.headers.get("host");
    if (authority === null) {
      // HTTP/2 carries the authority in the URL, never in a Host header.
      if (!secure) return plain(400, "Bad Request: missing Host header");
      authority = urlAuthority(req.url);
    }
    const host = hostName(authority);
    if (host === "" || authority.indexOf(",") >= 0) {
      return plain(400, "Bad Request: invalid Host header");
    }
    const app = gen.hosts.lookup(host);
    if (app === undefined) return plain(404, "Not Found: unknown host");

    const url = req.url;
    const ps = pathStart(url);
    const q = url.indexOf("?", ps);
    const rawPath = q < 0 ? (ps === 0 ? url : url.slice(ps)) : url.slice(ps, q);
    const path = normalizePath(rawPath.length === 0 ? "/" : rawPath);
    const route = app.router.match(path);
    const addr = info.remoteAddr as Deno.NetAddr;
    const peer = addr.hostname ?? "unix";
    const peerTrusted = gen.trusted(peer);
    const client = peerTrusted ? clientAddress(peer, req.headers, gen.trusted) : peer;
    const ex = new Exchange(
      req,
      path,
      q < 0 ? "" : url.slice(q),
      authority,
      peer,
      peerTrusted,
      client,
      secure,
      app.stats,
      performance.now(),
      this.log,
    );
    this.metrics.inflight.value++;
    let res: Response | Promise<Response>;
    try {
      res = route.handler.handle(ex);
    } catch (err) {
      res = this.fail(ex, err);
    }
    if (res instanceof Promise) {
      return res.then((r) => this.finish(ex, r), (e) => this.finish(ex, this.fail(ex, e)));
    }
    return this.finish(ex, res);
  }

  private finish(ex: Exchange, res: Response): Response {
    this.metrics.inflight.value--;
    if (ex.status === 0) ex.status = res.status;
    if (!ex.deferred) ex.complete();
    if (this.draining) res.headers.set("connection", "close");
    return res;
  }

  private fail(ex: Exchange, err: unknown): Response {
    ex.status = 500;
    ex.deferred = false;
    log("error", "handler_failed", { error: String(err), stack: (err as Error)?.stack });
    return plain(500, "Internal Server Error");
  }
}
