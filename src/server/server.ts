/**
 * One scalwsd instance (`Server`): its lifecycle states (`/readyz`), the current generation and
 * its swap on reload, the listeners, the pools' registry, applications, caches and ACME, and the
 * drain on shutdown. It implements `AdminTarget` for the admin API.
 *
 * @module
 */

import {
  type Config,
  ConfigError,
  type ListenerConfig,
  loadConfig,
  type Loaded,
  loadedError,
  type MemberConfig,
  placeProblems,
} from "../config/mod.ts";
import {
  LimiterRegistry,
  LimitsStore,
  type LimitsStoreState,
  setRequestIdHeader,
} from "../pipeline/mod.ts";
import { AccessLog, createMetrics, log, type Metrics } from "../observe/mod.ts";
import { AffinityKey, type PemReader, PoolRegistry } from "../upstream/mod.ts";
import { type Clock, Lock, systemClock } from "../base/mod.ts";
import { AppSupervisor } from "../apps/mod.ts";
import { Tracer } from "../tracing/mod.ts";
import { buildGeneration, cacheOwners } from "./build.ts";
import { Cache } from "../cache/mod.ts";
import { Dispatcher } from "./dispatcher.ts";
import type { Generation } from "./generation.ts";
import { Listener } from "./listener.ts";
import { bindHint } from "./bind_hint.ts";
import { DRAIN_IDLE_GRACE } from "../front/mod.ts";
import { PemFiles } from "./pem_files.ts";
import { affinityKeyProblem, preflight } from "./preflight.ts";
import { storedListWarnings } from "./stored_lists.ts";
import { MemberState, MemberStateError, type StoredMembers } from "../discovery/mod.ts";
import { MemberSources, type SourceStatus } from "./member_sources.ts";
import { AcmeManager, Http01Challenges } from "../acme/mod.ts";

/** Lifecycle states reported by `/readyz` (ADR-0035). */
export type State = "starting" | "warming" | "ready" | "active" | "draining";

export type ReloadResult =
  | { readonly ok: true; readonly generationId: number; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly errors: readonly string[] };

/** Options for tests and the controller; production uses the defaults. */
export interface ServerOptions {
  readonly clock?: Clock;
  /** Overrides `server.access_log` (tests pass `off`). */
  readonly accessLog?: string;
  /**
   * Id of the first generation (default 1); later reloads count up from it. The controller
   * passes the number of the configuration generation it started the instance on.
   */
  readonly firstGenerationId?: number;
  /** How often the console's per-member rates and p99 are sampled; default 10 s. */
  readonly historyIntervalMs?: number;
  /** How long a finished span waits at most before its export (ms); default 5 s (tests). */
  readonly tracingBatchDelay?: number;
  /** The controller's control socket, for an instance it started (`--controller-socket`). */
  readonly controllerSocket?: string;
  /** Where the file's relative paths resolve (`--base-dir`); default the file's directory. */
  readonly baseDir?: string;
  /** Reads the PEM files a build checks and uses (default `Deno.readTextFileSync`). */
  readonly readPem?: PemReader;
  /** `tls.acme` settings for tests (lock wait, order deadline, the directory's fetch). */
  readonly acme?: Partial<
    Pick<
      ConstructorParameters<typeof AcmeManager>[0],
      "fetchFor" | "lockWaitMs" | "lockStaleMs" | "orderDeadlineMs" | "random"
    >
  >;
}

/** `server` keys read only at start: the admin and metrics listeners, the affinity key, the log. */
const START_ONLY = ["admin", "metrics", "affinity_key_file", "access_log"] as const;

function startOnlyValues(c: Config): Map<string, string> {
  return new Map(START_ONLY.map((k) => [k, JSON.stringify(c.server[k] ?? null)]));
}

/**
 * One warning per start-only setting that `next` sets otherwise than the running process
 * started with: a reload does not apply it, and says so until a restart does.
 */
function startOnlyWarnings(started: ReadonlyMap<string, string>, next: Config): string[] {
  const now = startOnlyValues(next);
  return START_ONLY.filter((k) => started.has(k) && started.get(k) !== now.get(k)).map((k) =>
    `server.${k}: read only at start: the running process keeps its value until scalwsd restarts`
  );
}

/**
 * What a listener is kept by across reloads: its address, or for port 0 (any free port, where
 * several listeners may share the address text) its name too.
 */
function listenerKey(l: ListenerConfig): string {
  return l.port === 0 ? `${l.name}@${l.hostname}:0` : `${l.hostname}:${l.port}`;
}

/**
 * One scalwsd process: the generation holder, the pool registry, the listeners and the control
 * operations (reload, member changes) serialised by one lock. It is the admin API's
 * `AdminTarget` (admin/target.ts), by shape: a lower room does not import admin/.
 */
export class Server {
  readonly metrics: Metrics = createMetrics();
  readonly lock = new Lock();
  readonly registry: PoolRegistry;
  /** Supervised applications (`type: app`, `node`, `python`, `deno`) and their workers. */
  readonly apps: AppSupervisor;
  /** Resolves when the applications the latest build started are Ready (or gave up). */
  appsStarting: Promise<void> = Promise.resolve();
  /** Where each pool's members come from; the DNS loops. */
  readonly sources: MemberSources;
  readonly clock: Clock;
  state: State = "starting";
  private historyTimer: ReturnType<typeof setInterval> | undefined;
  private dispatcher!: Dispatcher;
  private accessLog!: AccessLog;
  private nextId = 1;
  private readonly listeners = new Map<string, { cfg: ListenerConfig; server: Listener }>();
  /** The load of the generation being served: where each listener is written in the file. */
  private loaded: Loaded | undefined;
  /** The response store: one per process, kept across reloads. */
  readonly cache: Cache;
  /** Rate limiters whose state outlives generations with the same definition. */
  private readonly limiters: LimiterRegistry;
  /** `server.limits_store` of the current generation; kept while its settings stay the same. */
  private limitsStore: LimitsStore | undefined;
  /** `server.tracing` of the current generation; kept while its settings stay the same. */
  private tracer: Tracer | undefined;
  /** Tracers replaced by a reload, closing 5 s later (or at shutdown). */
  private readonly retiredTracers = new Map<Tracer, ReturnType<typeof setTimeout>>();
  /** The start-only settings as the process started with them (`startOnlyWarnings`). */
  private startOnly: ReadonlyMap<string, string> = new Map();
  /** Addresses actually bound, by listener name (port 0 resolved). */
  readonly bound = new Map<string, Deno.NetAddr>();
  /** HTTP-01 challenges answered on plain listeners for `tls.acme` orders. */
  readonly challenges = new Http01Challenges();
  /** The certificates of `tls.acme`: ordered, stored, renewed, swapped in. */
  readonly acme: AcmeManager;

  private constructor(
    readonly file: string,
    key: AffinityKey,
    private readonly options: ServerOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.nextId = options.firstGenerationId ?? 1;
    this.registry = new PoolRegistry({ metrics: this.metrics, key, clock: this.clock });
    this.apps = new AppSupervisor(this.registry.deps, this.metrics);
    this.limiters = new LimiterRegistry(this.clock);
    this.sources = new MemberSources({
      clock: this.clock,
      lock: this.lock,
      metrics: this.metrics,
      pools: () => this.registry.pools,
    });
    this.cache = new Cache(256 * 1024 * 1024, this.clock, this.metrics.cacheRequests);
    this.cache.hitsMemory = this.metrics.cacheHitsMemory;
    this.cache.hitsDisk = this.metrics.cacheHitsDisk;
    this.cache.storeErrors = this.metrics.cacheStoreErrors;
    this.acme = new AcmeManager({
      clock: this.clock,
      random: Math.random,
      ...options.acme,
      challenges: this.challenges,
      onChange: () => this.applyAcmeCertificates(),
      metrics: { expiry: this.metrics.acmeExpiry, orders: this.metrics.acmeOrders },
    });
    this.metrics.registry.onCollect(() => {
      const store = this.cache.store;
      this.metrics.cacheObjects.value = store.objects;
      this.metrics.cacheBytes.value = store.bytes;
      this.metrics.cacheEvictions.value = store.evictions;
      const disk = this.cache.disk;
      this.metrics.cacheDiskBytes.value = disk?.bytes ?? 0;
      this.metrics.cacheDiskEntries.value = disk?.entries ?? 0;
    });
    this.metrics.registry.onCollect(() => this.registry.collect(this.clock.now()));
  }

  /** Loads the file and prepares the first generation (state `warming`); binds nothing. */
  static async prepare(file: string, options: ServerOptions = {}): Promise<Server> {
    const loaded = await loadConfig(file, options.baseDir ? { dir: options.baseDir } : {});
    const c = loaded.config;
    // A key file that cannot serve stops the start with the error `scalwsd check` gives.
    const keyProblem = affinityKeyProblem(c);
    if (keyProblem !== undefined) throw loadedError(loaded, [keyProblem]);
    const key = c.server.affinity_key_file
      ? AffinityKey.fromFile(c.server.affinity_key_file)
      : new AffinityKey();
    const s = new Server(file, key, options);
    s.startOnly = startOnlyValues(c);
    s.state = "warming";
    try {
      s.accessLog = new AccessLog(options.accessLog ?? c.server.access_log);
    } catch (err) {
      if (options.accessLog !== undefined) throw err;
      // Placed like a configuration error: which key, where, and why the file does not open.
      const why = String((err as Error).message ?? err).replace(/: open '.*'$/, "");
      throw loadedError(loaded, [
        `server.access_log: cannot open ${JSON.stringify(c.server.access_log)}: ${why}`,
      ]);
    }
    for (const w of [...loaded.warnings, ...await storedListWarnings(c)]) {
      log("warn", "config_warning", { file, warning: w });
    }
    const recorded = await recordedMembers(c);
    const gen = s.build(loaded, new Map([...recorded].map(([k, v]) => [k, v.members])));
    // Supervised applications serve from the first request: their workers are Ready first.
    await s.appsStarting;
    s.dispatcher = new Dispatcher(gen, s.metrics, s.accessLog);
    s.dispatcher.challenges = s.challenges;
    // Stored certificates are loaded (or placeholders made) before anything binds.
    await s.acme.sync(c);
    s.metrics.generation.value = gen.id;
    // DNS pools get their first answer while warming: ready means members where DNS has them.
    await s.sources.sync(c);
    for (const [name, stored] of recorded) s.sources.noteLoaded(name, stored.updated);
    s.registry.sampleHistory(s.clock.now());
    s.historyTimer = setInterval(
      () => s.registry.sampleHistory(s.clock.now()),
      s.historyIntervalMs,
    );
    s.state = "ready";
    return s;
  }

  get generation(): Generation {
    return this.dispatcher.current;
  }

  get config(): Config {
    return this.dispatcher.current.config;
  }

  /** Requests received since the start, over every generation. */
  get requests(): number {
    return this.dispatcher.requests;
  }

  /**
   * Records the member list of api pool `pool` in `server.state_dir` (when set) before a `PUT`
   * installs it; a failure to write is thrown and the `PUT` must change nothing.
   */
  async saveMembers(pool: string, members: readonly MemberConfig[]): Promise<void> {
    const dir = this.config.server.state_dir;
    if (dir !== undefined) await new MemberState(dir).save(pool, members, this.clock.now());
  }

  /** Records that `pool` got a new list through the admin API (`kubernetes`: the ingress). */
  noteMembers(
    pool: string,
    how: { readonly source: "api" | "kubernetes"; readonly changed: boolean },
  ): void {
    this.sources.noteUpdate(pool, how.source, how.changed);
  }

  /** Where pool `pool`'s members come from, when they last changed, the last discovery error. */
  memberSource(pool: string): Readonly<SourceStatus> | undefined {
    return this.sources.get(pool);
  }

  /** Interval of the console's samples (ms). */
  get historyIntervalMs(): number {
    return this.options.historyIntervalMs ?? 10_000;
  }

  /** Set under the controller (`--controller-socket`): member lists are set there. */
  get controllerSocket(): string | undefined {
    return this.options.controllerSocket;
  }

  /** Builds a generation beside the current one; on any failure nothing live has changed. */
  private build(loaded: Loaded, seeds?: ReadonlyMap<string, readonly MemberConfig[]>): Generation {
    // Each PEM file is read once per build: the pools use the text preflight checked.
    const pems = new PemFiles(this.options.readPem);
    const problems = [
      ...preflight(loaded.config, pems.read),
      ...this.registry.keptMemberProblems(loaded.config),
    ];
    if (problems.length > 0) throw loadedError(loaded, problems);
    const apps = this.apps.plan(loaded.config);
    let plan;
    try {
      plan = this.registry.plan(loaded.config, {
        readPem: pems.read,
        seeds,
        external: AppSupervisor.pools(apps),
      });
    } catch (err) {
      this.apps.discard(apps);
      throw err;
    }
    const wantStore = loaded.config.server.limits_store;
    const keepStore = this.limitsStore !== undefined && wantStore !== undefined &&
      JSON.stringify(this.limitsStore.config) === JSON.stringify(wantStore);
    const store = wantStore === undefined
      ? undefined
      : keepStore
      ? this.limitsStore
      : new LimitsStore(wantStore, this.metrics);
    const wantTracing = loaded.config.server.tracing;
    const keepTracer = this.tracer !== undefined && wantTracing !== undefined &&
      JSON.stringify(this.tracer.config) === JSON.stringify(wantTracing);
    const tracer = wantTracing === undefined
      ? undefined
      : keepTracer
      ? this.tracer
      : new Tracer(wantTracing, {
        dropped: this.metrics.tracingDropped.with(),
        batchDelay: this.options.tracingBatchDelay,
      });
    let gen: Generation;
    try {
      gen = buildGeneration(loaded.config, this.nextId, {
        metrics: this.metrics,
        pools: plan.pools,
        addresses: plan.addresses,
        clock: this.clock,
        limiters: this.limiters,
        limitsStore: store,
        cache: this.cache,
        tracer,
      });
    } catch (err) {
      if (store !== this.limitsStore) store?.close();
      if (tracer !== this.tracer) tracer?.close();
      this.registry.discard(plan);
      this.apps.discard(apps);
      throw err;
    }
    if (store !== this.limitsStore) {
      // Requests of the old generation may still be deciding there: close it a little later.
      const old = this.limitsStore;
      if (old !== undefined) Deno.unrefTimer(setTimeout(() => old.close(), 5_000));
      this.limitsStore = store;
    }
    if (tracer !== this.tracer) {
      // Requests of the old generation end their spans there: it exports them, then stops.
      const old = this.tracer;
      if (old !== undefined) {
        const timer = setTimeout(() => {
          this.retiredTracers.delete(old);
          old.close();
        }, 5_000);
        Deno.unrefTimer(timer as unknown as number);
        this.retiredTracers.set(old, timer);
      }
      this.tracer = tracer;
    }
    this.nextId++;
    setRequestIdHeader(loaded.config.server.request_id.header);
    if (this.dispatcher) this.dispatcher.current = gen;
    // The store outlives generations; entries of applications that lost their cache go.
    this.cache.store.setBudget(loaded.config.server.cache.max_size);
    this.cache.heuristicMax = Math.floor(loaded.config.server.cache.heuristic_max / 1000);
    const cc = loaded.config.server.cache;
    // Provisioning sets disk_max_size whenever path is set.
    this.cache.setDisk(cc.path, cc.disk_max_size ?? 0);
    const owners = cacheOwners(loaded.config);
    this.cache.store.dropOwners((o) => owners.has(o));
    this.registry.commit(plan);
    this.appsStarting = this.apps.commit(apps);
    this.loaded = loaded;
    return gen;
  }

  /** `PATH: MESSAGE` placed in the file of the generation being served (`AdminTarget`). */
  placed(problem: string): string {
    return this.loaded === undefined ? problem : placeProblems(this.loaded, [problem])[0];
  }

  /** Binds every configured listener (state `active`). */
  async bind(): Promise<void> {
    await this.syncListeners(this.config.server.listeners);
    this.state = "active";
    // Orders for tls.acme start once the plain listeners can answer the CA's validation.
    this.acme.start();
  }

  /**
   * Binds the listeners of `cfg` that are new (an address no current listener has), before a
   * reload changes anything, so that a port held elsewhere refuses the reload. A new address on
   * a port that a listener being removed still holds binds later, in `syncListeners`. On a
   * failure the ones bound here are closed again and the error is thrown.
   */
  private openListeners(loaded: Loaded): Map<string, Listener> {
    const cfg = loaded.config;
    const wanted = cfg.server.listeners;
    const keep = new Set(wanted.map(listenerKey));
    const freed = new Set<number>();
    for (const [k, l] of this.listeners) if (!keep.has(k)) freed.add(l.cfg.port);
    const opened = new Map<string, Listener>();
    try {
      for (const [index, l] of wanted.entries()) {
        const k = listenerKey(l);
        if (this.listeners.has(k) || opened.has(k) || freed.has(l.port)) continue;
        opened.set(
          k,
          this.newListener(l, index, cfg.server.listener_mode === "reuseport", loaded),
        );
      }
    } catch (err) {
      for (const l of opened.values()) void l.shutdown(0).catch(() => {});
      throw err;
    }
    return opened;
  }

  /**
   * Binds listener `cfg` (at `index` of the listeners of `loaded`); errors name the listener
   * and where its address is written (`FILE:LINE:COLUMN: server.listeners[0].address: ...`).
   */
  private newListener(
    cfg: ListenerConfig,
    index: number,
    reusePort: boolean,
    loaded: Loaded | undefined,
  ): Listener {
    try {
      return new Listener({
        cfg,
        dispatcher: this.dispatcher,
        reusePort,
        file: this.file,
        index,
        acme: this.acme,
      });
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      const problem = `server.listeners[${index}].address: listener "${cfg.name}" on ` +
        `${cfg.address}: ${(err as Error).message ?? err}${bindHint(err, cfg.port)}`;
      const placed = loaded === undefined ? problem : placeProblems(loaded, [problem])[0];
      throw new Error(placed, { cause: err });
    }
  }

  /**
   * Makes the listeners those of `wanted`: removed ones drain, kept ones take their new
   * settings, new ones bind (or come from `opened`, bound by `openListeners`).
   */
  private async syncListeners(
    wanted: readonly ListenerConfig[],
    opened: ReadonlyMap<string, Listener> = new Map(),
  ): Promise<void> {
    const keep = new Set(wanted.map(listenerKey));
    for (const [k, l] of this.listeners) {
      if (!keep.has(k)) {
        this.listeners.delete(k);
        this.bound.delete(l.cfg.name);
        await l.server.shutdown();
      }
    }
    // Listeners bound by `openListeners` are serving already: recorded before anything below
    // can fail, so that a drain closes them.
    for (const cfg of wanted) {
      const k = listenerKey(cfg);
      const server = opened.get(k);
      if (server === undefined) continue;
      this.listeners.set(k, { cfg, server });
      this.bound.set(cfg.name, server.addr);
      log("info", "listening", {
        listener: cfg.name,
        address: `${server.addr.hostname}:${server.addr.port}`,
      });
    }
    for (const [index, cfg] of wanted.entries()) {
      const k = listenerKey(cfg);
      if (opened.has(k)) continue;
      const have = this.listeners.get(k);
      if (have) {
        // New certificates or a switch between plain and TLS rebind the same port.
        await have.server.update(cfg, this.file, index);
        have.cfg = cfg;
        this.bound.set(cfg.name, have.server.addr);
        continue;
      }
      // Under the controller every instance binds the same address (needs --unstable-net).
      const server = this.newListener(
        cfg,
        index,
        this.config.server.listener_mode === "reuseport",
        this.loaded,
      );
      this.listeners.set(k, { cfg, server });
      this.bound.set(cfg.name, server.addr);
      log("info", "listening", {
        listener: cfg.name,
        address: `${server.addr.hostname}:${server.addr.port}`,
      });
    }
  }

  /** SIGUSR1 and SIGHUP: the access log file is opened again (log rotation). */
  reopenLogs(): void {
    try {
      this.accessLog.reopen();
      log("info", "logs_reopened", { access_log: this.accessLog.target });
    } catch (err) {
      log("error", "logs_reopen_failed", {
        access_log: this.accessLog.target,
        error: String((err as Error)?.message ?? err),
      });
    }
  }

  /** Reloads the configuration file: validate, build beside, swap; a failure changes nothing. */
  reload(): Promise<ReloadResult> {
    return this.lock.run(async () => {
      let loaded: Loaded;
      try {
        loaded = await loadConfig(
          this.file,
          this.options.baseDir ? { dir: this.options.baseDir } : {},
        );
        // New listeners bind first: a port held elsewhere refuses the reload before the swap.
        // Nothing awaits between their bind and the swap, so they never serve the old one.
        // An api pool new to this process (back in the file) starts from its recorded list,
        // as it would after a restart.
        const recorded = await recordedMembers(
          loaded.config,
          (name) => !this.registry.pools.has(name),
        );
        const opened = this.state === "active" ? this.openListeners(loaded) : new Map();
        try {
          this.build(loaded, new Map([...recorded].map(([k, v]) => [k, v.members])));
        } catch (err) {
          for (const l of opened.values()) await l.shutdown(0).catch(() => {});
          throw err;
        }
        await this.acme.sync(loaded.config);
        // Not awaited: the DNS rounds take this lock to install what they find.
        this.sources.sync(loaded.config);
        for (const [name, stored] of recorded) this.sources.noteLoaded(name, stored.updated);
        if (this.state === "active") {
          await this.syncListeners(loaded.config.server.listeners, opened);
        }
        // Applications new in this file answer once their workers are Ready (rolls go on).
        await this.appsStarting;
      } catch (err) {
        const errors = err instanceof ConfigError
          ? [...err.lines]
          : [String((err as Error)?.message ?? err)];
        this.metrics.reloads.with("error").value++;
        log("error", "reload_failed", { file: this.file, errors });
        return { ok: false, errors };
      }
      const warnings = [
        ...loaded.warnings,
        ...await storedListWarnings(loaded.config),
        ...startOnlyWarnings(this.startOnly, loaded.config),
      ];
      for (const w of warnings) {
        log("warn", "config_warning", { file: this.file, warning: w });
      }
      this.metrics.generation.value = this.generation.id;
      this.metrics.reloads.with("ok").value++;
      log("info", "reloaded", { file: this.file, generation: this.generation.id });
      return { ok: true, generationId: this.generation.id, warnings };
    });
  }

  /**
   * Swaps in what `tls.acme` got (issued, renewed, or stored by another instance) the way a
   * reload swaps certificates: new loopback TLS listeners behind the same public socket.
   */
  private applyAcmeCertificates(): void {
    this.lock.run(async () => {
      if (this.state !== "active") return;
      for (const [index, cfg] of this.config.server.listeners.entries()) {
        if (cfg.tls?.acme === undefined) continue;
        const have = this.listeners.get(listenerKey(cfg));
        if (have !== undefined) await have.server.update(cfg, this.file, index);
      }
    }).catch((err) => log("error", "acme_certificate_swap_failed", { error: String(err) }));
  }

  /**
   * Stops accepting, then lets in-flight requests finish and closes keep-alive connections
   * after one more request, or once idle past a grace of about 1 s (at most a third of
   * `timeoutMs`, the drain deadline; default 30 s).
   */
  async drain(timeoutMs = 30_000): Promise<void> {
    this.state = "draining";
    const listeners = [...this.listeners.values()];
    // Every listening socket is closed before any client is told to reconnect.
    await Promise.all(listeners.map((l) => l.server.stopAccepting()));
    this.dispatcher.draining = true;
    this.sources.stop();
    await this.acme.stop();
    clearInterval(this.historyTimer);
    const grace = Math.min(DRAIN_IDLE_GRACE, timeoutMs / 3);
    await Promise.all(listeners.map((l) => l.server.shutdown(grace)));
    this.listeners.clear();
    // Requests are done: every worker drains (what is left) and stops.
    await this.apps.stopAll();
    this.registry.closeAll();
    this.limitsStore?.close();
    this.cache.disk?.close();
    for (const timer of this.retiredTracers.values()) clearTimeout(timer);
    await Promise.all([this.tracer, ...this.retiredTracers.keys()].map((t) => t?.close()));
    this.retiredTracers.clear();
    this.accessLog.close();
  }

  /** The shared `limit_req` store's state (`GET /v1/limits`), or null without one. */
  limitsStoreState(): LimitsStoreState | null {
    return this.limitsStore?.state() ?? null;
  }
}

/**
 * The lists recorded in `server.state_dir` for the api pools of `config`. A file that cannot be
 * read or used is logged (`member_state_ignored`) and skipped: that pool starts from the file.
 */
async function recordedMembers(
  config: Config,
  only: (pool: string) => boolean = () => true,
): Promise<Map<string, StoredMembers>> {
  const seeds = new Map<string, StoredMembers>();
  const dir = config.server.state_dir;
  if (dir === undefined) return seeds;
  const state = new MemberState(dir);
  for (const [name, pool] of Object.entries(config.upstreams)) {
    if (pool.members_from !== "api" || !only(name)) continue;
    try {
      const stored = await state.load(name, pool.scheme, pool.protocol);
      if (stored === undefined) continue;
      seeds.set(name, stored);
      log("info", "member_state_loaded", {
        pool: name,
        members: stored.members.length,
        updated: new Date(stored.updated).toISOString(),
      });
    } catch (err) {
      // Never a reason not to start: the pool starts from the configuration's members.
      log("error", "member_state_ignored", {
        pool: name,
        file: state.file(name),
        error: err instanceof MemberStateError ? err.message : String(err),
      });
    }
  }
  return seeds;
}
