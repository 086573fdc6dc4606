/**
 * One span: a timed operation of a trace (a request scalwsd served, an attempt on a member),
 * its attributes, events and status, kept as plain fields while it is open. `finish()` hands it
 * to its tracer once, which writes it into the export batch at once: nothing may change after.
 *
 * It is not the exporter (`tracer.ts`, `otlp_json.ts`) and makes no sampling decision: a span
 * exists only for a sampled request.
 *
 * @module
 */

import { newSpanId } from "./ids.ts";

/** Attribute values as OTLP carries them: strings, integers, booleans. */
export type AttributeValue = string | number | boolean;

/** OTLP `Span.SpanKind`. */
export const SPAN_KIND_SERVER = 2;
export const SPAN_KIND_CLIENT = 3;

/** OTLP `Status.StatusCode`. */
export const STATUS_UNSET = 0;
export const STATUS_ERROR = 2;

/** Where finished spans go: the tracer's queue. */
export interface SpanSink {
  enqueue(span: Span): void;
}

/** Wall-clock milliseconds (fractional) for a `performance.now()` reading. */
export function wallMs(monotonic: number): number {
  return performance.timeOrigin + monotonic;
}

/** A timestamped annotation of a span (a retry decision, an ejection). */
export interface SpanEvent {
  readonly name: string;
  /** Wall-clock milliseconds. */
  readonly time: number;
  /** Key, value, key, value ... */
  readonly attributes: readonly AttributeValue[];
}

/** One operation of a trace; see the module comment. */
export class Span {
  /** Key, value, key, value ...: one array, no object per attribute. */
  readonly attributes: AttributeValue[] = [];
  events: SpanEvent[] | null = null;
  status = STATUS_UNSET;
  /** Wall-clock milliseconds; 0 until finished. */
  end = 0;

  constructor(
    readonly sink: SpanSink,
    /** 32 hex digits. */
    readonly traceId: string,
    /** 16 hex digits. */
    readonly spanId: string,
    /** The parent's span id; "" for a root. */
    readonly parentId: string,
    /** The parent's `tracestate` to pass on; "" for none. */
    readonly traceState: string,
    public name: string,
    readonly kind: number,
    /** Wall-clock milliseconds. */
    readonly start: number,
  ) {}

  /** Adds an attribute. */
  set(key: string, value: AttributeValue): void {
    this.attributes.push(key, value);
  }

  /** Adds an event now. */
  event(name: string, attributes: readonly AttributeValue[]): void {
    (this.events ??= []).push({ name, time: wallMs(performance.now()), attributes });
  }

  /** A child span of this one (an attempt on a member), starting now. */
  child(name: string, kind: number): Span {
    return new Span(
      this.sink,
      this.traceId,
      newSpanId(),
      this.spanId,
      this.traceState,
      name,
      kind,
      wallMs(performance.now()),
    );
  }

  /** The `traceparent` that makes this span the parent of what a member does. */
  traceparent(): string {
    return "00-" + this.traceId + "-" + this.spanId + "-01";
  }

  /** Ends the span now (once) and queues it for export. */
  finish(): void {
    if (this.end !== 0) return;
    this.end = wallMs(performance.now());
    this.sink.enqueue(this);
  }

  /** Whether `finish` was called. */
  get finished(): boolean {
    return this.end !== 0;
  }
}
