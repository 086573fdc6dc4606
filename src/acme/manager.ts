/**
 * The certificates of every listener's `tls.acme`, kept current: one task per certificate
 * (directory and domains), shared by listeners that ask for the same one.
 *
 * - At start and on reload (`sync`), a stored certificate that is still valid is loaded
 *   without ordering; without one, the listener presents its configured certificates, or a
 *   self-signed placeholder when it has none, until the first order succeeds. Orders begin
 *   with `start()`, once the listeners are bound (the CA's validation must reach them).
 * - A task orders at the renewal time of `schedule.ts` (two thirds of the lifetime, jitter),
 *   retries failures with its backoff, and stores what it got (`store.ts`) before `onChange`
 *   swaps it in; the old certificate serves until then.
 * - Instances sharing `server.state_dir` (the controller's) order one at a time: the lock file
 *   of `order_lock.ts`. An instance that finds the lock held waits, then loads what the holder
 *   stored; each task reads the stored file again before ordering.
 */
import type { Clock, Random } from "../base/mod.ts";
import type { AcmeConfig, Config, LoadedCertificate } from "../config/mod.ts";
import { type Family, log, type Series } from "../observe/mod.ts";
import { AcmeClient } from "./client.ts";
import type { Http01Challenges } from "./http01.ts";
import { type CheckedCertificate, checkIssued } from "./issued.ts";
import type { Fetch } from "./nonce.ts";
import { tryLock } from "./order_lock.ts";
import { orderCertificate } from "./order_flow.ts";
import { renewalTime, retryAfterMs, retryDelay } from "./schedule.ts";
import { AcmeProblem } from "./errors.ts";
import { selfSigned } from "./self_signed.ts";
import { AcmeStore, certificateId } from "./store.ts";

/** setTimeout's longest delay is about 24.8 days; a later renewal is looked at again daily. */
const MAX_TIMER = 86_400_000;

export interface AcmeMetrics {
  /** `scalws_acme_certificate_expiry_timestamp_seconds{domain}`. */
  readonly expiry: Family<Series>;
  /** `scalws_acme_orders_total{domain,result}`. */
  readonly orders: Family<Series>;
}

/** A fetch for one order against a directory trusting `caFile`, and its cleanup. */
export interface OrderFetch {
  readonly fetch: Fetch;
  close(): void;
}

export interface AcmeManagerOptions {
  readonly clock: Clock;
  readonly random: Random;
  readonly challenges: Http01Challenges;
  /** Some certificate changed (issued, renewed, or stored by another instance). */
  readonly onChange: () => void;
  readonly metrics?: AcmeMetrics;
  /** Default: `fetch` with a client trusting the system roots and `caFile`. */
  readonly fetchFor?: (caFile: string | undefined, signal: AbortSignal) => OrderFetch;
  /** A follower looks at the stored certificate again after this (ms); default 2 s. */
  readonly lockWaitMs?: number;
  /** A lock older than this was left by a dead order (ms); default 10 min. */
  readonly lockStaleMs?: number;
  /** Bound of one order (ms); default 2 min. */
  readonly orderDeadlineMs?: number;
}

function defaultFetchFor(caFile: string | undefined, signal: AbortSignal): OrderFetch {
  const client = caFile !== undefined
    ? Deno.createHttpClient({ caCerts: [Deno.readTextFileSync(caFile)] })
    : undefined;
  return {
    fetch: (url, init) => fetch(url, { ...init, signal, ...(client ? { client } : {}) }),
    close: () => client?.close(),
  };
}

class Task {
  cfg: AcmeConfig;
  store: AcmeStore;
  current: CheckedCertificate | undefined;
  renewAt = 0;
  placeholder: LoadedCertificate | undefined;
  failures = 0;
  timer: ReturnType<typeof setTimeout> | undefined;
  running: Promise<void> | undefined;
  stopped = false;
  /** The lock was held by another instance at the last look. */
  waiting = false;
  /** Why the stored file was last ignored (logged once per reason). */
  ignored = "";
  readonly abort = new AbortController();

  constructor(readonly id: string, cfg: AcmeConfig, stateDir: string) {
    this.cfg = cfg;
    this.store = new AcmeStore(stateDir);
  }

  get domain(): string {
    return this.cfg.domains[0];
  }
}

export class AcmeManager {
  private readonly tasks = new Map<string, Task>();
  /** Orders wait for `start()`: the CA's validation needs the plain listeners bound. */
  private started = false;
  /** `server.state_dir` of the last `sync`. */
  private dir: string | undefined;

  constructor(private readonly o: AcmeManagerOptions) {}

  /**
   * Starts, updates and stops tasks for the `tls.acme` of `config`; new tasks load their
   * stored certificate (or make a placeholder) before this resolves.
   */
  async sync(config: Config): Promise<void> {
    const dir = config.server.state_dir;
    const wanted = new Map<string, AcmeConfig>();
    const domains: string[] = [];
    for (const l of config.server.listeners) {
      const acme = l.tls?.acme;
      if (acme === undefined || dir === undefined) continue;
      wanted.set(certificateId(acme.directory, acme.domains), acme);
      domains.push(...acme.domains);
    }
    this.o.challenges.setDomains(domains);
    this.o.challenges.sharedDir = dir === undefined ? null : new AcmeStore(dir).challengeDir;
    // A new state_dir holds other files: every task starts again from it.
    const moved = dir !== this.dir;
    this.dir = dir;
    for (const [id, t] of this.tasks) {
      if (moved || !wanted.has(id)) {
        this.tasks.delete(id);
        await this.stopTask(t);
      }
    }
    for (const [id, cfg] of wanted) {
      const have = this.tasks.get(id);
      if (have !== undefined) {
        have.cfg = cfg; // email or ca_file may change; the next order uses them
        continue;
      }
      const t = new Task(id, cfg, dir!);
      this.tasks.set(id, t);
      await this.adoptStored(t);
      if (t.current === undefined) {
        const s = await selfSigned(cfg.domains, this.o.clock.now());
        t.placeholder = {
          cert: s.cert,
          key: s.key,
          names: cfg.domains,
          notAfter: 0,
          kind: "ecdsa-p256",
        };
      }
      if (this.started) this.schedule(t, this.firstTick(t));
    }
  }

  /** Lets tasks order (call once the listeners are bound); until then they only load. */
  start(): void {
    if (this.started) return;
    this.started = true;
    for (const t of this.tasks.values()) this.schedule(t, this.firstTick(t));
  }

  private firstTick(t: Task): number {
    return t.current === undefined ? this.o.clock.now() : t.renewAt;
  }

  /**
   * The certificate `acme` contributes to its listener, first in its set: the issued one, else
   * the placeholder when the listener has no certificate of its own (`alone`), else none.
   */
  certificatesFor(acme: AcmeConfig, alone: boolean): LoadedCertificate[] {
    const t = this.tasks.get(certificateId(acme.directory, acme.domains));
    if (t === undefined) return [];
    if (t.current !== undefined) return [t.current.loaded];
    return alone && t.placeholder !== undefined ? [t.placeholder] : [];
  }

  /** Stops every task; an order under way is aborted. */
  async stop(): Promise<void> {
    this.started = false;
    const all = [...this.tasks.values()];
    this.tasks.clear();
    await Promise.all(all.map((t) => this.stopTask(t)));
  }

  private async stopTask(t: Task): Promise<void> {
    t.stopped = true;
    clearTimeout(t.timer);
    t.abort.abort();
    await t.running;
  }

  private schedule(t: Task, at: number): void {
    if (t.stopped) return;
    clearTimeout(t.timer);
    const delay = Math.min(MAX_TIMER, Math.max(0, at - this.o.clock.now()));
    t.timer = setTimeout(() => {
      t.running = this.tick(t).finally(() => (t.running = undefined));
    }, delay);
  }

  /** Loads the stored certificate when it is valid and newer than the one in place. */
  private async adoptStored(t: Task): Promise<boolean> {
    const file = t.store.certificateFile(t.id);
    let checked: CheckedCertificate;
    try {
      const stored = await t.store.loadCertificate(t.id);
      if (stored === undefined) return false;
      checked = checkIssued(stored, t.cfg.domains, file, this.o.clock.now());
    } catch (err) {
      // Once per reason: a follower looks again every few seconds while another orders.
      const error = (err as Error).message;
      if (error !== t.ignored) log("warn", "acme_certificate_ignored", { file, error });
      t.ignored = error;
      return false;
    }
    if (t.current !== undefined && checked.loaded.cert === t.current.loaded.cert) return false;
    if (t.current !== undefined && checked.loaded.notAfter <= t.current.loaded.notAfter) {
      return false;
    }
    this.adopt(t, checked);
    log("info", "acme_certificate_loaded", {
      domains: t.cfg.domains,
      file,
      not_after: new Date(checked.loaded.notAfter).toISOString(),
    });
    return true;
  }

  private adopt(t: Task, c: CheckedCertificate): void {
    t.current = c;
    t.placeholder = undefined;
    t.renewAt = renewalTime(c.notBefore, c.loaded.notAfter, this.o.random);
    this.o.metrics?.expiry.with(t.domain).set(c.loaded.notAfter / 1000);
    // Before the listeners are bound this is a no-op: they take it when they are built.
    this.o.onChange();
  }

  private async tick(t: Task): Promise<void> {
    if (t.stopped) return;
    const now = this.o.clock.now();
    try {
      await this.adoptStored(t);
      if (t.current !== undefined && now < t.renewAt) return this.schedule(t, t.renewAt);
      const lock = await tryLock(
        t.store.lockFile(t.id),
        now,
        this.o.lockStaleMs ?? 600_000,
      ).catch(async (err) => {
        // The certificates folder may not exist yet: make it and try once more.
        if (!(err instanceof Deno.errors.NotFound)) throw err;
        await Deno.mkdir(`${t.store.root}/certificates`, { recursive: true, mode: 0o700 });
        return tryLock(t.store.lockFile(t.id), now, this.o.lockStaleMs ?? 600_000);
      });
      if (lock === null) {
        // Once per wait: another instance is ordering (or died holding the lock).
        if (!t.waiting) {
          log("info", "acme_order_waiting", {
            domains: t.cfg.domains,
            lock: t.store.lockFile(t.id),
          });
        }
        t.waiting = true;
        return this.schedule(t, now + (this.o.lockWaitMs ?? 2_000));
      }
      t.waiting = false;
      try {
        // Another instance may have finished while this one waited.
        if (await this.adoptStored(t) && this.o.clock.now() < t.renewAt) {
          return this.schedule(t, t.renewAt);
        }
        await this.order(t);
      } finally {
        await lock.release();
      }
    } catch (err) {
      if (t.stopped) return;
      this.failed(t, err);
    }
  }

  private async order(t: Task): Promise<void> {
    const cfg = t.cfg;
    const started = performance.now();
    log("info", "acme_order_started", {
      domains: cfg.domains,
      directory: cfg.directory,
      renewal: t.current !== undefined,
    });
    const f = (this.o.fetchFor ?? defaultFetchFor)(cfg.ca_file, t.abort.signal);
    let issued;
    try {
      const key = await t.store.accountKey(cfg.directory);
      const client = new AcmeClient({ directoryUrl: cfg.directory, fetch: f.fetch, key });
      issued = await orderCertificate({
        client,
        domains: cfg.domains,
        email: cfg.email,
        challenges: this.o.challenges,
        deadlineMs: this.o.orderDeadlineMs,
        sleep: (ms) => abortableSleep(ms, t.abort.signal),
      });
    } finally {
      f.close();
    }
    if (t.stopped) return;
    const checked = checkIssued(issued, cfg.domains, "issued certificate", this.o.clock.now());
    try {
      await t.store.saveCertificate(t.id, issued);
    } catch (err) {
      // Serve it anyway: ordering again would not make the disk writable, and CAs rate-limit.
      log("error", "acme_certificate_store_failed", {
        file: t.store.certificateFile(t.id),
        error: String(err),
      });
    }
    t.failures = 0;
    this.adopt(t, checked);
    this.o.metrics?.orders.with(t.domain, "ok").inc();
    log("info", "acme_order_succeeded", {
      domains: cfg.domains,
      not_after: new Date(checked.loaded.notAfter).toISOString(),
      renew_at: new Date(t.renewAt).toISOString(),
      ms: Math.round(performance.now() - started),
    });
    this.schedule(t, t.renewAt);
  }

  private failed(t: Task, err: unknown): void {
    t.failures++;
    const asked = err instanceof AcmeProblem ? retryAfterMs(err.retryAfter, this.o.clock.now()) : 0;
    const delay = Math.max(retryDelay(t.failures, this.o.random), asked);
    this.o.metrics?.orders.with(t.domain, "error").inc();
    log("error", "acme_order_failed", {
      domains: t.cfg.domains,
      error: (err as Error)?.message ?? String(err),
      failures: t.failures,
      retry_in_s: Math.round(delay / 1000),
      serving: t.current !== undefined ? "acme" : "fallback",
    });
    this.schedule(t, this.o.clock.now() + delay);
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
