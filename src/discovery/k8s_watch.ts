/**
 * A small Kubernetes list-then-watch client over `fetch` (what client-go's reflector does, for
 * one resource): list every object and note the list's `resourceVersion`, then watch from it
 * with bookmarks; apply ADDED, MODIFIED and DELETED to a local cache, move the resource version
 * forward on every event and BOOKMARK, watch again when the server ends the stream, list again
 * when the version is too old (`410 Gone`, as an HTTP status or an ERROR event), and back off
 * (doubling with jitter, bounded) on any other error. The cache keeps its last content while
 * the API server is unreachable. A line it cannot read (bad JSON, an unknown event type, an
 * object without a name) ends the stream as an error: it never crashes the caller.
 */
import type { Random } from "../base/mod.ts";
import { log } from "../observe/mod.ts";

/** The part of a Kubernetes object the cache needs. */
export interface KubeObject {
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly resourceVersion?: string;
  };
  readonly [key: string]: unknown;
}

/** Why the cache changed: a fresh list, or one watch event. */
export type ChangeReason = "list" | "ADDED" | "MODIFIED" | "DELETED";

/** What a watch needs. */
export interface KubeWatchInit {
  /** `https://kubernetes.default.svc` in a cluster; a loopback URL in tests. */
  readonly server: string;
  /** Collection path, e.g. `/apis/networking.k8s.io/v1/ingresses`. */
  readonly path: string;
  /** `Authorization: Bearer ...` and the like. */
  readonly headers?: Readonly<Record<string, string>>;
  /** An HTTP client trusting the cluster CA. */
  readonly client?: Deno.HttpClient;
  /** Called after every change of the cache (a list, or an event that changed an object). */
  onChange(objects: ReadonlyMap<string, KubeObject>, reason: ChangeReason): void;
  /** Server-side end of one watch request in seconds; default 300. */
  readonly timeoutSeconds?: number;
  /** Backoff after an error: first delay and bound in ms; defaults 500 ms and 30 s. */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly random?: Random;
}

/** A failure of the API server or of its answer. */
export class KubeWatchError extends Error {}

class Gone extends Error {}

/** `namespace/name`, or `name` for cluster objects. */
export function objectKey(o: KubeObject): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
}

function isObject(v: unknown): v is KubeObject {
  if (typeof v !== "object" || v === null) return false;
  const m = (v as { metadata?: unknown }).metadata;
  return typeof m === "object" && m !== null &&
    typeof (m as { name?: unknown }).name === "string" && (m as { name: string }).name !== "";
}

/** One resource's list-then-watch loop and its cache. */
export class KubeWatch {
  readonly objects = new Map<string, KubeObject>();
  /** The version the next watch starts from; undefined: list first. */
  resourceVersion: string | undefined;
  /** Lists done (the first one and every relist). */
  lists = 0;
  private stopped = false;
  private abort: AbortController | null = null;
  private failures = 0;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;

  constructor(private readonly init: KubeWatchInit) {}

  /** Starts the loop; it runs until `stop()`. */
  start(): this {
    this.loop ??= this.run();
    return this;
  }

  /** Ends the loop and the watch request in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort();
    this.wake?.();
    await this.loop;
  }

  private url(query: Record<string, string>): string {
    const q = new URLSearchParams(query).toString();
    return `${this.init.server.replace(/\/$/, "")}${this.init.path}${q ? `?${q}` : ""}`;
  }

  private async get(query: Record<string, string>): Promise<Response> {
    this.abort = new AbortController();
    const res = await fetch(this.url(query), {
      headers: { accept: "application/json", ...this.init.headers },
      signal: this.abort.signal,
      ...(this.init.client ? { client: this.init.client } : {}),
    });
    if (res.status === 410) {
      await res.body?.cancel();
      throw new Gone();
    }
    if (!res.ok) {
      const text = (await res.text()).slice(0, 200);
      throw new KubeWatchError(`${this.init.path}: HTTP ${res.status} ${text}`);
    }
    return res;
  }

  private async list(): Promise<void> {
    const items = new Map<string, KubeObject>();
    let cont: string | undefined;
    let version: string | undefined;
    do {
      const res = await this.get({ limit: "500", ...(cont ? { continue: cont } : {}) });
      const body = await res.json() as {
        items?: unknown;
        metadata?: { resourceVersion?: string; continue?: string };
      };
      if (!Array.isArray(body.items)) {
        throw new KubeWatchError(`${this.init.path}: list without items`);
      }
      for (const o of body.items) {
        if (!isObject(o)) {
          throw new KubeWatchError(`${this.init.path}: listed object without a name`);
        }
        items.set(objectKey(o), o);
      }
      version = body.metadata?.resourceVersion;
      cont = body.metadata?.continue || undefined;
    } while (cont !== undefined && !this.stopped);
    if (version === undefined) {
      throw new KubeWatchError(`${this.init.path}: list without resourceVersion`);
    }
    this.objects.clear();
    for (const [k, o] of items) this.objects.set(k, o);
    this.resourceVersion = version;
    this.lists++;
    this.init.onChange(this.objects, "list");
  }

  /** One watch request; returns when the server ends the stream. */
  private async watch(): Promise<void> {
    const res = await this.get({
      watch: "1",
      resourceVersion: this.resourceVersion!,
      allowWatchBookmarks: "true",
      timeoutSeconds: String(this.init.timeoutSeconds ?? 300),
    });
    this.failures = 0;
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let rest = "";
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        rest += value;
        let nl: number;
        while ((nl = rest.indexOf("\n")) >= 0) {
          const line = rest.slice(0, nl).trim();
          rest = rest.slice(nl + 1);
          if (line !== "") this.event(line);
        }
      }
      if (rest.trim() !== "") this.event(rest.trim());
    } finally {
      reader.releaseLock();
      await res.body?.cancel().catch(() => {});
    }
  }

  private event(line: string): void {
    let ev: { type?: unknown; object?: unknown };
    try {
      ev = JSON.parse(line);
    } catch {
      throw new KubeWatchError(`${this.init.path}: watch event is not JSON`);
    }
    const o = ev.object;
    if (ev.type === "ERROR") {
      const code = (o as { code?: unknown } | null)?.code;
      if (code === 410) throw new Gone();
      throw new KubeWatchError(`${this.init.path}: watch error ${JSON.stringify(o).slice(0, 200)}`);
    }
    if (ev.type === "BOOKMARK") {
      const rv = (o as { metadata?: { resourceVersion?: unknown } } | null)?.metadata
        ?.resourceVersion;
      if (typeof rv !== "string") {
        throw new KubeWatchError(`${this.init.path}: bookmark without resourceVersion`);
      }
      this.resourceVersion = rv;
      return;
    }
    if (ev.type !== "ADDED" && ev.type !== "MODIFIED" && ev.type !== "DELETED") {
      throw new KubeWatchError(
        `${this.init.path}: unknown watch event type ${JSON.stringify(ev.type)}`,
      );
    }
    if (!isObject(o)) throw new KubeWatchError(`${this.init.path}: watch event without an object`);
    if (ev.type === "DELETED") this.objects.delete(objectKey(o));
    else this.objects.set(objectKey(o), o);
    if (o.metadata.resourceVersion !== undefined) this.resourceVersion = o.metadata.resourceVersion;
    this.init.onChange(this.objects, ev.type);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(t);
        this.wake = null;
        resolve();
      };
    });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (this.resourceVersion === undefined) await this.list();
        if (this.stopped) break;
        await this.watch();
      } catch (err) {
        if (this.stopped) break;
        if (err instanceof Gone) {
          log("info", "kube_relist", { path: this.init.path, reason: "410 Gone" });
          this.resourceVersion = undefined;
          continue;
        }
        this.failures++;
        const base = this.init.backoffMs ?? 500;
        const max = this.init.maxBackoffMs ?? 30_000;
        const delay = Math.min(max, base * 2 ** Math.min(this.failures - 1, 20));
        const jittered = Math.round(delay * (0.5 + (this.init.random ?? Math.random)() / 2));
        log("warn", "kube_watch_failed", {
          path: this.init.path,
          error: String((err as Error)?.message ?? err),
          retry_ms: jittered,
        });
        await this.sleep(jittered);
      }
    }
  }
}
