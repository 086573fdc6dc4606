/**
 * `server.tracing`: decides which requests are traced, makes their server spans, and exports
 * finished spans to an OTLP/HTTP collector in batches (at most 512 spans, or whatever waited
 * 5 s), one export at a time, from a bounded queue: when the queue is full (the collector slow
 * or down) a finished span is dropped and counted (`scalws_tracing_spans_dropped_total`), as are
 * the spans of an export that failed. Nothing on the request path waits for the collector.
 *
 * Sampling is parent-based: a believed parent's `sampled` flag decides (a sampled parent is
 * always continued, an unsampled one never); without one, `sample_ratio` of requests are traced.
 * An unsampled request costs one `Math.random()` and allocates nothing.
 *
 * @module
 */

import type { TracingConfig } from "../config/mod.ts";
import { log, type Series } from "../observe/mod.ts";
import { newSpanId, newTraceId } from "./ids.ts";
import { SpanBatch } from "./otlp_json.ts";
import { type AttributeValue, Span, SPAN_KIND_SERVER, type SpanSink, wallMs } from "./span.ts";
import { keepTracestate, sampledFlag } from "./trace_context.ts";

/** Spans per export at most. */
export const MAX_BATCH = 512;
/** Longest wait of a finished span before its export starts (ms). */
export const BATCH_DELAY = 5_000;
/** Longest time one export may take before it counts as failed (ms). */
const EXPORT_TIMEOUT = 10_000;
/** Longest wait for the last export at shutdown (ms). */
const CLOSE_TIMEOUT = 2_000;

/** The request fields sampling reads. */
export interface TraceHeaders {
  get(name: string): string | null;
}

/** What a tracer is made of besides its settings. */
export interface TracerDeps {
  /** Counts dropped spans. */
  readonly dropped: Series;
  /** Milliseconds a finished span waits at most before export; default 5 s. */
  readonly batchDelay?: number;
  readonly random?: () => number;
}

/** See the module comment. One per process, kept across reloads with the same settings. */
export class Tracer implements SpanSink {
  readonly trustClient: boolean;
  private readonly ratio: number;
  private readonly dropped: Series;
  private readonly batchDelay: number;
  private readonly random: () => number;
  private readonly resource: AttributeValue[];
  private readonly headers: Record<string, string>;
  /** Full batches waiting for export, oldest first. */
  private ready: SpanBatch[] = [];
  /** The batch being filled. */
  private current: SpanBatch | null = null;
  /** Batches exported, kept for reuse (their buffers). */
  private readonly free: SpanBatch[] = [];
  /** Spans in `ready` and `current`. */
  private pending = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private exporting: Promise<void> | null = null;
  private closed = false;
  /** The latest export failed (logged once until one succeeds). */
  private failing = false;

  constructor(readonly config: TracingConfig, deps: TracerDeps) {
    this.trustClient = config.trust_client;
    this.ratio = config.sample_ratio;
    this.dropped = deps.dropped;
    this.batchDelay = deps.batchDelay ?? BATCH_DELAY;
    this.random = deps.random ?? Math.random;
    this.resource = ["service.name", config.service_name];
    this.headers = { ...config.headers, "content-type": "application/json" };
  }

  /**
   * The server span of a request that started at `start` (`performance.now()`), or null when the
   * request is not traced. `believe`: the client's `traceparent` and `tracestate` may be used
   * (a trusted proxy, or `trust_client`).
   */
  start(headers: TraceHeaders, believe: boolean, start: number): Span | null {
    if (believe) {
      const tp = headers.get("traceparent");
      if (tp !== null) {
        const sampled = sampledFlag(tp);
        if (sampled === false) return null;
        if (sampled === true) {
          return new Span(
            this,
            tp.slice(3, 35),
            newSpanId(),
            tp.slice(36, 52),
            keepTracestate(headers.get("tracestate")),
            "",
            SPAN_KIND_SERVER,
            wallMs(start),
          );
        }
      }
    }
    if (!(this.random() < this.ratio)) return null;
    return new Span(this, newTraceId(), newSpanId(), "", "", "", SPAN_KIND_SERVER, wallMs(start));
  }

  /** Writes a finished span into the current batch; drops and counts it when the queue is full. */
  enqueue(span: Span): void {
    if (this.closed || this.pending >= this.config.queue_size) {
      this.dropped.value++;
      return;
    }
    const b = this.current ??= this.free.pop() ?? new SpanBatch(this.resource);
    b.add(span);
    this.pending++;
    if (b.count >= MAX_BATCH) {
      this.ready.push(b);
      this.current = null;
      if (this.exporting === null) this.exportNow();
    } else if (this.timer === undefined && this.exporting === null) this.arm();
  }

  /** Spans waiting for export (not those of the export in flight). */
  get queued(): number {
    return this.pending;
  }

  /** Exports what is queued (tests, shutdown); resolves when the exports are done. */
  flush(): Promise<void> {
    if (this.exporting === null && this.pending > 0) this.exportNow();
    return this.exporting ?? Promise.resolve();
  }

  /**
   * Exports what is queued (waiting at most 2 s for it, the export in flight included), then
   * drops every later span; what is still queued then counts as dropped.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    const last = (async () => {
      if (this.exporting !== null) await this.exporting;
      if (this.pending > 0) await this.drain();
    })();
    let t: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([last, new Promise((r) => t = setTimeout(r, CLOSE_TIMEOUT))]);
    clearTimeout(t);
    this.dropped.value += this.pending;
    this.pending = 0;
    this.ready = [];
    this.current = null;
  }

  private exportNow(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.exporting = this.drain().finally(() => {
      this.exporting = null;
      // What arrived meanwhile: a full batch goes now, the rest within the delay.
      if (this.closed || this.pending === 0) return;
      if (this.ready.length > 0) this.exportNow();
      else if (this.timer === undefined) this.arm();
    });
  }

  /** The batch delay starts: what is queued then is exported when it ends. */
  private arm(): void {
    const t = this.timer = setTimeout(() => this.exportNow(), this.batchDelay);
    Deno.unrefTimer(t as unknown as number);
  }

  /** Sends the full batches, then the partial one; a partial one waits while open. */
  private async drain(): Promise<void> {
    for (;;) {
      let b = this.ready.shift();
      if (b === undefined) {
        b = this.current ?? undefined;
        if (b === undefined || b.count === 0) return;
        this.current = null;
      }
      this.pending -= b.count;
      await this.send(b);
      b.reset();
      if (this.free.length < 2) this.free.push(b);
      if (this.ready.length === 0 && !this.closed) return;
    }
  }

  private async send(batch: SpanBatch): Promise<void> {
    let problem = "";
    try {
      const res = await fetch(this.config.endpoint, {
        method: "POST",
        headers: this.headers,
        body: batch.body(),
        signal: AbortSignal.timeout(EXPORT_TIMEOUT),
      });
      await res.body?.cancel();
      if (!res.ok) problem = `status ${res.status}`;
    } catch (err) {
      problem = err instanceof Error ? err.message : String(err);
    }
    if (problem === "") {
      if (this.failing) log("info", "tracing_export_restored", { endpoint: this.config.endpoint });
      this.failing = false;
      return;
    }
    this.dropped.value += batch.count;
    if (!this.failing) {
      log("warn", "tracing_export_failed", {
        endpoint: this.config.endpoint,
        error: problem,
        spans: batch.count,
      });
    }
    this.failing = true;
  }
}
