/**
 * Every supervised application of a scalwsd process, across reloads: planned beside the live
 * ones (nothing starts before the generation is swapped in), kept when unchanged, rolled when
 * changed, stopped when removed. Metrics `scalws_app_workers{tenant,app,state}` and
 * `scalws_app_restarts_total{tenant,app}`.
 */

import type { AppRuntime, Config, RuntimeConfig } from "../config/mod.ts";
import type { Family, Metrics, Series } from "../observe/mod.ts";
import type { Pool, PoolDeps } from "../upstream/mod.ts";
import { AppGroup, cpuAllotment, type GroupMetrics, type WorkerView } from "./group.ts";
import { FpmWatch, fpmWatches, type WantedWatch } from "./fpm_status.ts";

/**
 * The pool name of an application's workers: `TENANT.APP`, or `TENANT.APP.routes[I]` for a
 * route's runtime. Never a configured pool's name (those cannot hold a dot).
 */
export function appPoolName(tenant: string, app: string, route = -1): string {
  return route < 0 ? `${tenant}.${app}` : `${tenant}.${app}.routes[${route}]`;
}

/** One application runtime of a configuration. */
interface Wanted {
  readonly name: string;
  readonly tenant: string;
  readonly app: string;
  readonly runtime: AppRuntime;
}

function wanted(cfg: Config): Wanted[] {
  const out: Wanted[] = [];
  const visit = (rt: RuntimeConfig, tenant: string, app: string, route: number) => {
    if (rt.type === "app") {
      out.push({ name: appPoolName(tenant, app, route), tenant, app, runtime: rt });
    }
  };
  for (const t of cfg.tenants) {
    for (const a of t.applications) {
      visit(a.runtime, t.name, a.name, -1);
      a.routes.forEach((r, i) => visit(r.runtime, t.name, a.name, i));
    }
  }
  return out;
}

/** What a reload will do to the applications; built without starting or stopping anything. */
export interface AppPlan {
  readonly groups: ReadonlyMap<string, AppGroup>;
  readonly created: readonly AppGroup[];
  readonly changed: readonly [AppGroup, AppRuntime][];
  readonly removed: readonly AppGroup[];
  /** PHP-FPM status pages to poll (`type: php` with `status_path`), by key. */
  readonly fpm: readonly WantedWatch[];
}

/** An application as `GET /v1/apps` shows it. */
export interface AppView {
  readonly name: string;
  readonly tenant: string;
  readonly app: string;
  readonly type: string;
  readonly command: readonly string[];
  /** `workers` of the runtime: how many processes it should have. */
  readonly desired_workers: number;
  readonly restarts: number;
  readonly states: Record<string, number>;
  /** Each worker: id, PID, state, address, restarts, requests in flight, CPU, uptime. */
  readonly workers: WorkerView[];
}

const STATES = ["starting", "ready", "draining", "backoff", "failed"];

export class AppSupervisor implements GroupMetrics {
  groups: ReadonlyMap<string, AppGroup> = new Map();
  private readonly workersFamily: Family<Series>;
  private readonly restartsFamily: Family<Series>;
  private readonly cpuFamily: Family<Series>;
  private readonly allotmentFamily: Family<Series>;
  private readonly fpmBusy: Family<Series>;
  private readonly fpmTotal: Family<Series>;
  private watches = new Map<string, FpmWatch>();
  private readonly stopping = new Set<Promise<void>>();

  constructor(private readonly deps: PoolDeps, metrics: Metrics) {
    const r = metrics.registry;
    this.workersFamily = r.gauge(
      "scalws_app_workers",
      "Worker processes of supervised applications by state.",
      ["tenant", "app", "state"],
    );
    this.restartsFamily = r.counter(
      "scalws_app_restarts_total",
      "Restarts of crashed worker processes of supervised applications.",
      ["tenant", "app"],
    );
    this.cpuFamily = r.counter(
      "scalws_app_cpu_seconds_total",
      "User and system CPU time of the worker processes of supervised applications.",
      ["tenant", "app"],
    );
    this.allotmentFamily = r.gauge(
      "scalws_app_cpu_allotment",
      "CPUs the Ready workers of a supervised application may use (one each, at most the host's).",
      ["tenant", "app"],
    );
    this.fpmBusy = r.gauge(
      "scalws_app_fpm_busy_processes",
      "PHP-FPM processes serving a request, from its status page (status_path).",
      ["tenant", "app"],
    );
    this.fpmTotal = r.gauge(
      "scalws_app_fpm_processes",
      "PHP-FPM processes, from its status page (status_path).",
      ["tenant", "app"],
    );
    r.onCollect(() => this.collect());
  }

  /** The pools of `plan`'s applications, by pool name (for the pool registry). */
  static pools(plan: AppPlan): Map<string, Pool> {
    const out = new Map<string, Pool>();
    for (const [name, g] of plan.groups) out.set(name, g.pool);
    return out;
  }

  /** Plans `cfg`'s applications: unchanged ones keep their group and processes. */
  plan(cfg: Config): AppPlan {
    const groups = new Map<string, AppGroup>();
    const created: AppGroup[] = [];
    const changed: [AppGroup, AppRuntime][] = [];
    for (const w of wanted(cfg)) {
      const old = this.groups.get(w.name);
      if (old !== undefined) {
        groups.set(w.name, old);
        if (old.key !== JSON.stringify(w.runtime)) changed.push([old, w.runtime]);
        continue;
      }
      const g = new AppGroup(w.name, w.tenant, w.app, w.runtime, this.deps, this);
      groups.set(w.name, g);
      created.push(g);
    }
    const removed = [...this.groups.values()].filter((g) => !groups.has(g.name));
    return { groups, created, changed, removed, fpm: fpmWatches(cfg) };
  }

  /** Drops a refused plan: groups it created never started. */
  discard(plan: AppPlan): void {
    for (const g of plan.created) {
      g.pool.retire();
      Deno.remove(g.dir, { recursive: true }).catch(() => {});
    }
  }

  /**
   * Makes a plan live after the generation swap: new applications start, changed ones roll,
   * removed ones drain and stop. Resolves once the new ones are Ready (or gave up); rolls and
   * stops go on in the background (`settled`).
   */
  commit(plan: AppPlan): Promise<void> {
    this.groups = plan.groups;
    const watches = new Map<string, FpmWatch>();
    for (const w of plan.fpm) {
      let watch = this.watches.get(w.key);
      if (watch === undefined) {
        watch = new FpmWatch(w.tenant, w.app, w.rt.status_path!, w.addresses);
        watch.start();
      }
      watches.set(w.key, watch);
    }
    for (const [k, w] of this.watches) {
      if (watches.has(k)) continue;
      w.stop();
      this.fpmBusy.remove(w.tenant, w.app);
      this.fpmTotal.remove(w.tenant, w.app);
    }
    this.watches = watches;
    for (const g of plan.created) g.pool.activate();
    for (const [g, rt] of plan.changed) g.update(rt);
    for (const g of plan.removed) this.forget(g, g.stop(g.runtime.drain_timeout));
    return Promise.all(plan.created.map((g) => g.start())).then(() => {});
  }

  private forget(g: AppGroup, stopped: Promise<void>): void {
    // A shutdown waits for applications still stopping after a reload removed them.
    this.stopping.add(stopped);
    stopped.finally(() => {
      this.stopping.delete(stopped);
      for (const s of STATES) this.workersFamily.remove(g.tenant, g.app, s);
      this.restartsFamily.remove(g.tenant, g.app);
      this.cpuFamily.remove(g.tenant, g.app);
      this.allotmentFamily.remove(g.tenant, g.app);
    });
  }

  /** Waits for rolls in progress (tests, and the admin view after a reload). */
  async settled(): Promise<void> {
    await Promise.all([...this.groups.values()].map((g) => g.settled()));
  }

  restarted(g: AppGroup): void {
    this.restartsFamily.with(g.tenant, g.app).value++;
  }

  private collect(): void {
    for (const w of this.watches.values()) {
      this.fpmBusy.with(w.tenant, w.app).value = w.busy;
      this.fpmTotal.with(w.tenant, w.app).value = w.total;
    }
    for (const g of this.groups.values()) {
      const c = g.counts();
      for (const s of STATES) this.workersFamily.with(g.tenant, g.app, s).value = c[s];
      this.restartsFamily.with(g.tenant, g.app);
      this.cpuFamily.with(g.tenant, g.app).value = g.cpuSeconds();
      this.allotmentFamily.with(g.tenant, g.app).value = cpuAllotment(c.ready);
    }
  }

  view(): AppView[] {
    return [...this.groups.values()].map((g) => ({
      name: g.name,
      tenant: g.tenant,
      app: g.app,
      type: g.runtime.preset,
      command: g.runtime.command,
      desired_workers: g.runtime.workers,
      restarts: g.restarts,
      states: g.counts(),
      workers: g.view(),
    }));
  }

  /** Drains and stops every application (SIGTERM to scalwsd). */
  async stopAll(): Promise<void> {
    for (const w of this.watches.values()) w.stop();
    this.watches = new Map();
    const all = [...this.groups.values()];
    this.groups = new Map();
    await Promise.all([...all.map((g) => g.stop(g.runtime.drain_timeout)), ...this.stopping]);
  }
}
