/**
 * The control API, served on a local Unix socket only (no remote mode): status of every
 * instance and generation, reload and rollback, scale, autoscaling on/off, the pools of one
 * serving instance, stop. Errors are `{"error": "..."}`.
 */
import { Hono } from "hono";
import { EXPOSITION_CONTENT_TYPE, log } from "../observe/mod.ts";
import { hitRatio, type Result, RESULTS } from "../cache/mod.ts";
import { ControlError } from "./control_error.ts";
import { BODY_TOO_LARGE, MAX_MEMBERS_BODY } from "../config/mod.ts";
import { allowedMethods, methodNotAllowed } from "../base/mod.ts";

/** What the API drives; `Controller` implements it. */
export interface ControlTarget {
  status(): Promise<Record<string, unknown>>;
  /** The controller's own metrics in the Prometheus text format. */
  metricsText(): string;
  reload(): Promise<{ generation: number; previous: number; warnings: string[] }>;
  rollback(): Promise<{ generation: number; previous: number }>;
  scale(n: number): Promise<{ desired: number; previous: number }>;
  setAutoscaling(enabled: boolean): Promise<{ autoscaling: boolean }>;
  fromServingInstance(
    path: string,
  ): Promise<{ id: string; generation: number; status: number; body: string }>;
  /** The same admin request to every running instance; unreachable ones are left out. */
  toEveryInstance(
    req: { method: string; path: string; body?: string },
  ): Promise<{ id: string; status: number; body: string }[]>;
  /** The pools of one serving instance and whether every instance holds the same lists. */
  upstreams(): Promise<Record<string, unknown>>;
  /** Checks, records and sends a member list (`PUT /v1/upstreams/{name}`). */
  setMembers(name: string, text: string): Promise<Record<string, unknown>>;
}

/** Request bodies are small JSON objects. */
export const MAX_CONTROL_BODY = 64 * 1024;

function audit(action: string, result: string, detail: Record<string, unknown> = {}): void {
  log("info", "control_audit", { action, result, ...detail });
}

/** `onStop` is called after the `POST /v1/stop` answer is on its way. */
export function createControlApp(target: ControlTarget, onStop: () => void): Hono {
  const app = new Hono();

  app.get("/v1/status", async (c) => c.json(await target.status()));

  app.get("/metrics", () =>
    new Response(target.metricsText(), {
      headers: { "content-type": EXPOSITION_CONTENT_TYPE },
    }));

  app.post("/v1/reload", async (c) => {
    const r = await target.reload();
    audit("reload", "ok", { generation: r.generation });
    return c.json(r);
  });

  app.post("/v1/rollback", async (c) => {
    const r = await target.rollback();
    audit("rollback", "ok", { generation: r.generation });
    return c.json(r);
  });

  app.post("/v1/scale", async (c) => {
    const len = Number(c.req.header("content-length") ?? 0);
    if (len > MAX_CONTROL_BODY) {
      return c.json({ error: `body is larger than ${MAX_CONTROL_BODY} bytes` }, 413);
    }
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      return c.json({ error: "body: invalid JSON" }, 400);
    }
    const n = (body as { instances?: unknown } | null)?.instances;
    if (typeof n !== "number") return c.json({ error: 'body: expected {"instances": N}' }, 400);
    const r = await target.scale(n);
    audit("scale", "ok", { desired: r.desired });
    return c.json(r);
  });

  app.post("/v1/autoscaling/:what{enable|disable}", async (c) => {
    const r = await target.setAutoscaling(c.req.param("what") === "enable");
    audit(c.req.param("what"), "ok");
    return c.json(r);
  });

  const upstreams = async (path: string) => {
    const r = await target.fromServingInstance(path);
    let body: unknown;
    try {
      body = JSON.parse(r.body);
    } catch {
      body = { error: r.body.trim() };
    }
    const obj = typeof body === "object" && body !== null ? body : { value: body };
    return new Response(JSON.stringify({ instance: r.id, generation: r.generation, ...obj }), {
      status: r.status,
      headers: { "content-type": "application/json" },
    });
  };
  app.get("/upstreams", async (c) => c.json(await target.upstreams()));
  app.get("/v1/upstreams", async (c) => c.json(await target.upstreams()));
  app.get(
    "/v1/upstreams/:name",
    (c) => upstreams(`/v1/upstreams/${encodeURIComponent(c.req.param("name"))}`),
  );
  app.put("/v1/upstreams/:name", async (c) => {
    const name = c.req.param("name");
    const len = c.req.header("content-length");
    const text = len !== undefined && Number(len) > MAX_MEMBERS_BODY ? null : await c.req.text();
    if (text === null || new TextEncoder().encode(text).length > MAX_MEMBERS_BODY) {
      throw new ControlError(413, BODY_TOO_LARGE);
    }
    const r = await target.setMembers(name, text);
    audit("set_members", "ok", { pool: name });
    return c.json(r);
  });

  // A purge goes to every instance (each has its own store); the answer is the sum.
  app.post("/v1/cache/purge", async (c) => {
    const len = Number(c.req.header("content-length") ?? 0);
    if (len > MAX_CONTROL_BODY) {
      return c.json({ error: `body is larger than ${MAX_CONTROL_BODY} bytes` }, 413);
    }
    const body = await c.req.text();
    const answers = await target.toEveryInstance({ method: "POST", path: "/v1/cache/purge", body });
    if (answers.length === 0) return c.json({ error: "no instance answered" }, 503);
    let purged = 0;
    const instances: Record<string, unknown>[] = [];
    for (const a of answers) {
      let parsed: { purged?: number; error?: string } = {};
      try {
        parsed = JSON.parse(a.body);
      } catch { /* reported as the instance's status */ }
      if (a.status === 400) {
        // Every instance checks the body the same way: its message is the answer.
        audit("cache_purge", "refused 400", { error: parsed.error });
        return c.json({ error: parsed.error ?? "bad request" }, 400);
      }
      if (typeof parsed.purged === "number") purged += parsed.purged;
      instances.push({ id: a.id, status: a.status, ...parsed });
    }
    audit("cache_purge", "ok", { purged, instances: answers.length });
    return c.json({ purged, instances });
  });

  app.get("/v1/cache", async (c) => {
    const answers = await target.toEveryInstance({ method: "GET", path: "/v1/cache" });
    const instances = answers.map((a) => {
      try {
        return { id: a.id, ...JSON.parse(a.body) };
      } catch {
        return { id: a.id, error: a.body.trim() };
      }
    });
    const sum = (k: string) => instances.reduce((n, i) => n + (Number(i[k]) || 0), 0);
    return c.json({
      objects: sum("objects"),
      bytes: sum("bytes"),
      hit_ratio: hitRatio(requestsOf(instances)),
      instances,
    });
  });

  app.post("/v1/stop", (c) => {
    audit("stop", "ok");
    setTimeout(onStop, 0);
    return c.json({ stopping: true }, 202);
  });

  app.notFound((c) => {
    // A known path asked with another method: 405 naming the methods it takes, as instances do.
    const allowed = allowedMethods(app.routes, c.req.path);
    if (allowed.length === 0) return c.json({ error: "not found" }, 404);
    c.header("allow", allowed.join(", "));
    return c.json({ error: methodNotAllowed(c.req.method, c.req.path, allowed) }, 405);
  });
  app.onError((err, c) => {
    if (err instanceof ControlError) {
      audit(c.req.path, `refused ${err.status}`, { error: err.message });
      return c.json(
        err.errors ? { error: err.message, errors: err.errors } : { error: err.message },
        err.status,
      );
    }
    log("error", "control_failed", { error: String(err), stack: (err as Error)?.stack });
    return c.json({ error: "internal error" }, 500);
  });
  return app;
}

/** Serves `app` on the Unix socket `path` (mode 0600), replacing a stale socket file. */
export async function serveControlSocket(path: string, app: Hono): Promise<Deno.HttpServer> {
  try {
    await Deno.remove(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const server = Deno.serve({ path, onListen() {} }, (req) => app.fetch(req));
  await Deno.chmod(path, 0o600);
  return server;
}

/** Every instance's cache requests by result (`applications[].requests`), added up. */
function requestsOf(instances: readonly Record<string, unknown>[]): Record<Result, number> {
  const total = { hit: 0, miss: 0, stale: 0, revalidated: 0, bypass: 0, collapsed: 0 };
  for (const i of instances) {
    const apps = Array.isArray(i.applications) ? i.applications : [];
    for (const a of apps as { requests?: Record<string, unknown> }[]) {
      for (const r of RESULTS) total[r] += Number(a?.requests?.[r]) || 0;
    }
  }
  return total;
}
