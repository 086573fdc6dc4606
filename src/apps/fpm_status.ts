/**
 * PHP-FPM's own load, read from its status page (`pm.status_path`) over FastCGI every 2 s for
 * each `type: php` runtime with `status_path` while requests go to its addresses or its
 * workers are busy; every 30 s while both stay still, and at once when the next request comes
 * (an idle scalwsd then costs PHP-FPM and itself nothing). Busy and total worker processes, summed over the
 * FastCGI addresses it uses. The controller classifies an application whose processes are all
 * busy as `PhpSaturated`. A `static` pool's size becomes the connection limit of its address
 * (`learnMaxChildren`) unless `max_conns` is set.
 */

import type { Config, PhpRuntime, RuntimeConfig } from "../config/mod.ts";
import type { MemberAddress } from "../net/mod.ts";
import {
  activityOf,
  type FcgiActivity,
  FcgiConns,
  fcgiSend,
  learnMaxChildren,
  ParamsBuffer,
} from "../fastcgi/mod.ts";
import { Connector } from "../http1/mod.ts";

/** Between two reads of a status page (ms). */
export const POLL_EVERY = 2000;
/** Between two reads while no request came and no worker was busy (ms). */
export const QUIET_POLL_EVERY = 30_000;
const TIMEOUT = 1000;

/** What one status page says. */
export interface FpmCounts {
  /** Processes serving a request, the status request itself not counted. */
  readonly busy: number;
  readonly total: number;
  /**
   * `pm.max_children` when the page tells it: a `static` pool runs exactly that many; null
   * for `dynamic` and `ondemand` (the page does not say).
   */
  readonly maxChildren: number | null;
}

/** Reads `active processes` and `total processes` from the `?json` status; null if absent. */
export function parseFpmStatus(text: string): FpmCounts | null {
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof j !== "object" || j === null) return null;
  const r = j as Record<string, unknown>;
  const active = r["active processes"];
  const total = r["total processes"];
  if (typeof active !== "number" || typeof total !== "number") return null;
  const maxChildren = r["process manager"] === "static" && total > 0 ? total : null;
  return { busy: Math.max(0, active - 1), total, maxChildren };
}

/** One application's PHP-FPM status, polled. */
export class FpmWatch {
  busy = 0;
  total = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly conns: FcgiConns[];
  private readonly activities: FcgiActivity[];
  /** Requests through the addresses at the last poll. */
  private seen = -1;
  private polling = false;
  private stopped = false;

  constructor(
    readonly tenant: string,
    readonly app: string,
    readonly path: string,
    addresses: readonly MemberAddress[],
  ) {
    // A connection per read, never kept: a kept one would hold a PHP-FPM worker.
    this.conns = addresses.map((a) =>
      new FcgiConns(new Connector(a, null), {
        address: a.canonical,
        maxConns: 1,
        maxQueue: 0,
        counted: false,
      })
    );
    this.activities = addresses.map((a) => activityOf(a.canonical));
  }

  start(): void {
    this.#round();
  }

  /** Polls, then schedules the next poll: soon while busy, else late or at the next request. */
  async #round(): Promise<void> {
    this.timer = undefined;
    for (const a of this.activities) a.cancel(this.#wake);
    await this.poll();
    if (this.stopped) return;
    let requests = 0;
    for (const a of this.activities) requests += a.requests;
    const quiet = requests === this.seen && this.busy === 0;
    this.seen = requests;
    this.timer = setTimeout(() => this.#round(), quiet ? QUIET_POLL_EVERY : POLL_EVERY);
    Deno.unrefTimer(this.timer);
    if (quiet) { for (const a of this.activities) a.onNext(this.#wake); }
  }

  /** The first request after a quiet stretch: poll now. */
  readonly #wake = (): void => {
    if (this.timer === undefined || this.stopped) return;
    clearTimeout(this.timer);
    this.#round();
  };

  /** Reads every address once; an address that does not answer counts as nothing. */
  async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    let busy = 0;
    let total = 0;
    for (const c of this.conns) {
      const counts = await readStatus(c, this.path);
      if (counts === null) continue;
      // The limit of this address's FastCGI connections unless max_conns is set.
      if (counts.maxChildren !== null) learnMaxChildren(c.address, counts.maxChildren);
      busy += counts.busy;
      total += counts.total;
    }
    this.busy = busy;
    this.total = total;
    this.polling = false;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const a of this.activities) a.cancel(this.#wake);
    for (const c of this.conns) c.close();
  }
}

async function readStatus(conns: FcgiConns, path: string): Promise<FpmCounts | null> {
  const params = new ParamsBuffer(256);
  params.add("GATEWAY_INTERFACE", "CGI/1.1");
  params.add("REQUEST_METHOD", "GET");
  params.add("SCRIPT_NAME", path);
  params.add("SCRIPT_FILENAME", path);
  params.add("REQUEST_URI", path + "?json");
  params.add("QUERY_STRING", "json");
  params.add("CONTENT_LENGTH", "");
  try {
    const res = await fcgiSend(conns, { method: "GET", params, body: null, bodyLength: 0 }, {
      connectTimeout: TIMEOUT,
      responseTimeout: TIMEOUT,
    });
    const body = res.body === null
      ? new Uint8Array(0)
      : res.body instanceof Uint8Array
      ? res.body
      : await new Response(res.body).bytes();
    if (res.status !== 200) return null;
    return parseFpmStatus(new TextDecoder().decode(body));
  } catch {
    return null;
  }
}

/** A status page to poll. */
export interface WantedWatch {
  /** Same key, same watch across reloads. */
  readonly key: string;
  readonly tenant: string;
  readonly app: string;
  readonly rt: PhpRuntime;
  readonly addresses: readonly MemberAddress[];
}

/** The php runtimes of `cfg` with a `status_path`, with the FastCGI addresses they use. */
export function fpmWatches(cfg: Config): WantedWatch[] {
  const out: WantedWatch[] = [];
  const seen = new Set<string>();
  const visit = (rt: RuntimeConfig, tenant: string, app: string) => {
    if (rt.type !== "php" || rt.status_path === undefined) return;
    const f = rt.fastcgi;
    const addresses = f.kind === "address"
      ? [f.address]
      : (cfg.upstreams[f.pool]?.members ?? []).map((m) => m.parsed);
    const key = `${tenant}/${app}|${rt.status_path}|${addresses.map((a) => a.canonical).join(",")}`;
    if (seen.has(`${tenant}/${app}`)) return;
    seen.add(`${tenant}/${app}`);
    out.push({ key, tenant, app, rt, addresses });
  };
  for (const t of cfg.tenants) {
    for (const a of t.applications) {
      visit(a.runtime, t.name, a.name);
      for (const r of a.routes) visit(r.runtime, t.name, a.name);
    }
  }
  return out;
}
