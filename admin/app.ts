/**
 * The admin API as a Hono app (`createAdminApp`): status, pools and members (run-time changes
 * included), reloads, purges, limits, sites, with one error shape (`{"error": "..."}`), bodies
 * capped at 2 MiB and the controller's source header. It reaches the server only through
 * `AdminTarget`; the listeners are `listeners.ts`.
 *
 * @module
 */

import {
  BODY_TOO_LARGE,
  checkMembersBody,
  type Config,
  CONTROLLER_PUT_HEADER,
  MAX_MEMBERS_BODY,
  putTargetError,
} from "../src/config/mod.ts";
import { Hono } from "hono";
import type { Context } from "hono";
import { allowedMethods, methodNotAllowed } from "../src/base/mod.ts";
import { EXPOSITION_CONTENT_TYPE, log } from "../src/observe/mod.ts";
import { parsePurge, type PurgeTarget } from "../src/cache/mod.ts";
import { normalizePath } from "../src/pipeline/mod.ts";
import type { AdminTarget } from "./target.ts";
import { readyz } from "./metrics_app.ts";
import { poolView } from "./views.ts";
import { consolePage } from "./console.ts";

/** Request bodies of the admin API are capped; larger ones get 413 before they are read. */
export const MAX_ADMIN_BODY = 2 * 1024 * 1024;

/** Who called, for audit lines: `who`, and the peer's `host:port` on a TCP listener. */
interface Caller {
  readonly who: string;
  readonly peer?: string;
}

type Env = { Variables: { caller: Caller } };

/** A member `PUT` from the ingress controller carries `x-scalws-source: kubernetes`. */
export const SOURCE_HEADER = "x-scalws-source";

class BodyTooLarge extends Error {}

async function readCapped(req: Request): Promise<string> {
  const len = req.headers.get("content-length");
  if (len !== null && Number(len) > MAX_ADMIN_BODY) throw new BodyTooLarge();
  if (req.body === null) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > MAX_ADMIN_BODY) {
      await reader.cancel();
      throw new BodyTooLarge();
    }
    chunks.push(value);
  }
  const all = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    all.set(c, off);
    off += c.length;
  }
  return new TextDecoder().decode(all);
}

function audit(
  caller: Caller,
  action: string,
  target: string,
  result: string,
  detail?: unknown,
): void {
  log("info", "admin_audit", {
    who: caller.who,
    ...(caller.peer === undefined ? {} : { peer: caller.peer }),
    action,
    target,
    result,
    ...(detail === undefined ? {} : { detail }),
  });
}

/** How one listener serves the admin API. */
export interface AdminAppOptions {
  /** The peer's `host:port` of a request, for audit lines (TCP listeners). */
  readonly peerOf?: (req: Request) => string | undefined;
  /**
   * Set on `server.admin.http` without `writes: true`: only GET and HEAD, other methods get
   * `403` naming the admin socket, the place for writes.
   */
  readonly readOnly?: boolean;
}

/**
 * The admin API: readiness, metrics, reload, pools and their run-time members, the console.
 * `who` names the caller in audit lines (`socket`, `http`, or a client certificate subject).
 */
export function createAdminApp(
  server: AdminTarget,
  whoOf: (req: Request) => string = () => "socket",
  options: AdminAppOptions = {},
): Hono<Env> {
  const app = new Hono<Env>();

  app.use("*", async function identify(c, next) {
    const peer = options.peerOf?.(c.req.raw);
    c.set("caller", { who: whoOf(c.req.raw), ...(peer === undefined ? {} : { peer }) });
    await next();
  });
  if (options.readOnly) {
    app.use("*", async function readOnly(c, next) {
      if (c.req.method === "GET" || c.req.method === "HEAD") return await next();
      const socket = server.config.server.admin.socket;
      return c.json({
        error: `server.admin.http is read-only (GET and HEAD): send ${c.req.method} to the ` +
          `admin socket${socket === undefined ? " (server.admin.socket)" : ` ${socket}`}, ` +
          `or set server.admin.http.writes: true`,
      }, 403);
    });
  }

  app.get("/readyz", () => readyz(server));
  app.get("/livez", (c) => c.json({ status: "ok" }));
  app.get(
    "/metrics",
    () =>
      new Response(server.metrics.registry.render(), {
        headers: { "content-type": EXPOSITION_CONTENT_TYPE },
      }),
  );

  app.post("/v1/reload", async (c) => {
    // Under the controller an instance serves the generation it was started on (ADR-0035):
    // reloads are rolled by the controller, as SIGHUP is ignored.
    if (server.controllerSocket !== undefined) {
      const error =
        `reloads are rolled by the controller: POST /v1/reload on its control socket ${server.controllerSocket}`;
      audit(c.get("caller"), "reload", server.file, "refused 409", { error });
      return c.json({ error }, 409);
    }
    const r = await server.reload();
    if (r.ok) {
      audit(c.get("caller"), "reload", server.file, "ok", { generation: r.generationId });
      return c.json({ generation: r.generationId, warnings: r.warnings });
    }
    audit(c.get("caller"), "reload", server.file, "refused", { errors: r.errors });
    return c.json({ error: r.errors.join("\n"), errors: r.errors }, 400);
  });

  // Supervised applications: workers with PID, state, restarts, in-flight requests and CPU.
  app.get("/v1/apps", (c) => c.json({ apps: server.apps.view() }));

  app.get("/v1/upstreams", (c) => {
    const now = server.clock.now();
    return c.json({
      upstreams: [...server.registry.pools.values()].map((p) =>
        poolView(p, now, server.memberSource(p.name))
      ),
    });
  });

  // The console's charts: per pool, rates and p99 per member over 15 minutes, and events.
  app.get("/v1/history/upstreams", (c) => {
    const interval = server.historyIntervalMs;
    return c.json({
      now: server.clock.now(),
      interval_ms: interval,
      window_ms: interval * 90,
      pools: [...server.registry.pools.values()].map((p) => ({
        name: p.name,
        samples: p.history.samples,
        events: p.history.events,
      })),
    });
  });

  app.get("/v1/upstreams/:name", (c) => {
    const pool = server.registry.pools.get(c.req.param("name"));
    if (!pool) return c.json({ error: `no pool named "${c.req.param("name")}"` }, 404);
    return c.json(poolView(pool, server.clock.now(), server.memberSource(pool.name)));
  });

  app.put("/v1/upstreams/:name", (c) => putMembers(c, server));

  app.get("/v1/cache", (c) => c.json(server.cache.stats()));
  // The shared limit_req store (server.limits_store): its state, or null without one.
  app.get("/v1/limits", (c) => c.json({ limits_store: server.limitsStoreState() }));
  app.get("/v1/sites", (c) => c.json({ sites: sitesView(server.config) }));
  app.post("/v1/cache/purge", (c) => purgeCache(c, server));

  app.get("/console", (c) => c.redirect("/console/"));
  app.get("/console/", (c) => c.html(consolePage()));

  app.notFound((c) => {
    // A known path asked with another method: 405 naming the methods it takes.
    const allowed = allowedMethods(app.routes, c.req.path);
    if (allowed.length === 0) return c.json({ error: "not found" }, 404);
    c.header("allow", allowed.join(", "));
    return c.json({ error: methodNotAllowed(c.req.method, c.req.path, allowed) }, 405);
  });
  app.onError((err, c) => {
    log("error", "admin_failed", { error: String(err) });
    return c.json({ error: "internal error" }, 500);
  });
  return app;
}

/** `POST /v1/cache/purge`: removes what the body names; answers `{"purged": N}`. */
async function purgeCache(c: Context<Env>, server: AdminTarget): Promise<Response> {
  const caller = c.get("caller");
  const reject = (status: 400 | 413, error: string) => {
    audit(caller, "cache_purge", "-", `refused ${status}`, { error });
    return c.json({ error }, status);
  };
  let text: string;
  try {
    text = await readCapped(c.req.raw);
  } catch (err) {
    if (err instanceof BodyTooLarge) {
      return reject(413, `body is larger than ${MAX_ADMIN_BODY} bytes`);
    }
    return reject(400, "body could not be read");
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return reject(400, "body: invalid JSON");
  }
  const parsed = parsePurge(body);
  if (typeof parsed === "string") return reject(400, parsed);
  const target = normalizedPurge(parsed);
  const purged = await server.cache.purge(target);
  const what = "all" in target
    ? "all"
    : "path" in target
    ? `${target.host}${target.path}`
    : `${target.host}${target.prefix}*`;
  audit(caller, "cache_purge", what, "ok", { purged });
  return c.json({ purged });
}

/**
 * A purge's path or prefix normalised as request paths are before they become keys (`.`, `..`
 * and `//` resolved), so that `/a/./b` purges what a request for it stored under `/a/b`.
 */
function normalizedPurge(t: PurgeTarget): PurgeTarget {
  if ("all" in t) return t;
  if ("prefix" in t) return { host: t.host, prefix: normalizePath(t.prefix) };
  const q = t.path.indexOf("?");
  const path = q < 0 ? t.path : t.path.slice(0, q);
  return { host: t.host, path: normalizePath(path) + (q < 0 ? "" : t.path.slice(q)) };
}

async function putMembers(c: Context<Env>, server: AdminTarget): Promise<Response> {
  const name = c.req.param("name")!;
  const caller = c.get("caller");
  const reject = (status: 400 | 404 | 409 | 413 | 500 | 501, error: string) => {
    audit(caller, "set_members", name, `refused ${status}`, { error });
    return c.json({ error }, status);
  };
  // Under the controller the lists are the controller's: it alone sends them, with this header.
  const managed = server.controllerSocket !== undefined;
  if (managed && c.req.header(CONTROLLER_PUT_HEADER) === undefined) {
    return reject(
      409,
      `run-time members are set through the controller: PUT /v1/upstreams/${name} on its control socket ${server.controllerSocket}`,
    );
  }
  const len = c.req.header("content-length");
  if (len !== undefined && Number(len) > MAX_MEMBERS_BODY) return reject(413, BODY_TOO_LARGE);
  return await server.lock.run(async () => {
    const pool = server.registry.pools.get(name);
    if (!pool) return reject(404, `no pool named "${name}"`);
    const mode = server.config.server.listener_mode;
    if (!managed && mode !== "shared") {
      return reject(501, `run-time members are not supported with listener_mode: ${mode}`);
    }
    if (pool.external) {
      return reject(
        409,
        `pool "${name}" holds the workers of a supervised application; change its runtime (workers) in the configuration`,
      );
    }
    const target = putTargetError(name, pool.settings);
    if (target !== undefined) return reject(target.status, target.error);
    let text: string;
    try {
      text = await readCapped(c.req.raw);
    } catch (err) {
      if (err instanceof BodyTooLarge) return reject(413, BODY_TOO_LARGE);
      return reject(400, "body could not be read");
    }
    const checked = checkMembersBody(text, pool.settings);
    if ("error" in checked) return reject(checked.status, checked.error);
    const members = checked.members;
    if (pool !== server.registry.pools.get(name)) return reject(404, `no pool named "${name}"`);
    if (!managed) {
      try {
        // Durable before it is answered: a restart right after this PUT serves this list.
        await server.saveMembers(name, members);
      } catch (err) {
        return reject(500, `cannot record the members: ${(err as Error).message ?? err}`);
      }
    }
    const key = (l: readonly { address: string; weight: number }[]) =>
      l.map((m) => `${m.address}=${m.weight}`).join(",");
    const changed = key(pool.memberConfigs()) !== key(members);
    pool.install(pool.plan(members), members);
    // The ingress controller says so: `scalwsd ctl upstreams` then shows the pool as kubernetes.
    server.noteMembers(name, {
      source: c.req.header(SOURCE_HEADER) === "kubernetes" ? "kubernetes" : "api",
      changed,
    });
    audit(caller, "set_members", name, "ok", { members: members.length });
    return c.json(poolView(pool, server.clock.now(), server.memberSource(name)));
  });
}

/**
 * `GET /v1/sites`: the main file, then each site file of `server.include`, with the tenants
 * and domains it defines.
 */
export function sitesView(cfg: Config) {
  const main = cfg.tenants.filter((t) => t.file === undefined);
  return [
    {
      file: cfg.file,
      main: true,
      tenants: main.map((t) => t.name),
      domains: main.flatMap((t) => t.applications.flatMap((a) => a.domains)),
    },
    ...cfg.sites.map((s) => ({
      file: s.file,
      main: false,
      tenants: s.tenants,
      domains: s.domains,
    })),
  ];
}
