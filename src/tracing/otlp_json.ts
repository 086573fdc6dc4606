/**
 * OTLP/HTTP JSON encoding of a batch of spans (`ExportTraceServiceRequest`, as the
 * OpenTelemetry protocol's JSON mapping writes it: ids in hex, 64-bit integers as decimal
 * strings, enums as numbers), written as UTF-8 bytes straight into one buffer reused from
 * batch to batch: no string is built per span, so a traced request leaves little garbage
 * (string concatenation plus `TextEncoder` cost about twice as much CPU here, mostly in GC).
 * Characters outside printable ASCII are written as `\uXXXX` escapes, which JSON allows for
 * any character.
 *
 * @module
 */

import type { AttributeValue, Span } from "./span.ts";

const enc = new TextEncoder();
const b = (s: string) => enc.encode(s);

const RESOURCE_START = b('{"resourceSpans":[{"resource":{"attributes":[');
const SCOPE_START = b(']},"scopeSpans":[{"scope":{"name":"scalwsd"},"spans":[');
const BATCH_END = b("]}]}]}");
const TRACE_ID = b('{"traceId":"');
const SPAN_ID = b('","spanId":"');
const PARENT_ID = b('","parentSpanId":"');
const TRACE_STATE = b('","traceState":');
const NAME_AFTER_ID = b('","name":');
const NAME = b(',"name":');
const KIND = b(',"kind":');
const START = b(',"startTimeUnixNano":"');
const END = b('","endTimeUnixNano":"');
const ATTRIBUTES = b('","attributes":[');
const EVENTS = b('],"events":[');
const EVENT_TIME = b('{"timeUnixNano":"');
const EVENT_NAME = b('","name":');
const EVENT_ATTRIBUTES = b(',"attributes":[');
const EVENT_END = b("]}");
const STATUS = b('],"status":{"code":');
const SPAN_END = b("}}");
const KEY = b('{"key":"');
const STRING_VALUE = b('","value":{"stringValue":');
const INT_VALUE = b('","value":{"intValue":"');
const BOOL_TRUE = b('","value":{"boolValue":true}}');
const BOOL_FALSE = b('","value":{"boolValue":false}}');
const VALUE_END = b("}}");
const INT_END = b('"}}');
const HEX = b("0123456789abcdef");

/** One growing byte buffer, reused: `encodeSpans` returns views of it. */
class Out {
  buf = new Uint8Array(1 << 16);
  at = 0;

  room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.at + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.at));
    this.buf = next;
  }

  /** A short constant fragment: a byte loop (`set` costs more per call at these sizes). */
  raw(bytes: Uint8Array): void {
    const n = bytes.length;
    this.room(n);
    const buf = this.buf;
    let at = this.at;
    for (let i = 0; i < n; i++) buf[at++] = bytes[i];
    this.at = at;
  }

  /** Text known to be printable ASCII without `"` or `\` (keys, ids). */
  ascii(s: string): void {
    this.room(s.length);
    const buf = this.buf;
    let at = this.at;
    for (let i = 0; i < s.length; i++) buf[at++] = s.charCodeAt(i);
    this.at = at;
  }

  /** A JSON string: quoted, escaped. */
  str(s: string): void {
    this.room(s.length * 6 + 2);
    const buf = this.buf;
    let at = this.at;
    buf[at++] = 34;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x20 && c < 0x7f && c !== 34 && c !== 92) {
        buf[at++] = c;
      } else if (c === 34 || c === 92) {
        buf[at++] = 92;
        buf[at++] = c;
      } else {
        // \uXXXX: controls, DEL and every non-ASCII code unit (surrogates pair up again).
        buf[at++] = 92;
        buf[at++] = 117;
        buf[at++] = HEX[c >>> 12];
        buf[at++] = HEX[(c >>> 8) & 15];
        buf[at++] = HEX[(c >>> 4) & 15];
        buf[at++] = HEX[c & 15];
      }
    }
    buf[at++] = 34;
    this.at = at;
  }

  /** A non-negative integer's digits. */
  uint(n: number): void {
    this.room(20);
    const buf = this.buf;
    if (n < 10) {
      buf[this.at++] = 48 + n;
      return;
    }
    let digits = 0;
    for (let x = n; x >= 1; x = Math.floor(x / 10)) digits++;
    let at = this.at + digits;
    this.at = at;
    for (let x = n; x >= 1; x = Math.floor(x / 10)) buf[--at] = 48 + (x % 10);
  }

  /** Unix nanoseconds for wall-clock milliseconds: whole milliseconds, then six digits. */
  nanos(ms: number): void {
    const whole = Math.floor(ms);
    const frac = Math.min(999_999, Math.round((ms - whole) * 1e6));
    this.uint(whole);
    this.room(6);
    const buf = this.buf;
    let at = this.at + 6;
    this.at = at;
    for (let i = 0, x = frac; i < 6; i++, x = Math.floor(x / 10)) buf[--at] = 48 + (x % 10);
  }

  attributes(list: readonly AttributeValue[]): void {
    for (let i = 0; i < list.length; i += 2) {
      if (i > 0) this.comma();
      this.raw(KEY);
      this.ascii(list[i] as string);
      const v = list[i + 1];
      if (typeof v === "string") {
        this.raw(STRING_VALUE);
        this.str(v);
        this.raw(VALUE_END);
      } else if (typeof v === "number") {
        this.raw(INT_VALUE);
        const n = Math.trunc(v);
        if (n < 0) {
          this.room(1);
          this.buf[this.at++] = 45;
        }
        this.uint(Math.abs(n));
        this.raw(INT_END);
      } else this.raw(v ? BOOL_TRUE : BOOL_FALSE);
    }
  }

  comma(): void {
    this.room(1);
    this.buf[this.at++] = 44;
  }

  span(s: Span): void {
    this.raw(TRACE_ID);
    this.ascii(s.traceId);
    this.raw(SPAN_ID);
    this.ascii(s.spanId);
    if (s.parentId !== "") {
      this.raw(PARENT_ID);
      this.ascii(s.parentId);
    }
    if (s.traceState !== "") {
      this.raw(TRACE_STATE);
      this.str(s.traceState);
      this.raw(NAME);
    } else this.raw(NAME_AFTER_ID);
    this.str(s.name);
    this.raw(KIND);
    this.uint(s.kind);
    this.raw(START);
    this.nanos(s.start);
    this.raw(END);
    this.nanos(s.end);
    this.raw(ATTRIBUTES);
    this.attributes(s.attributes);
    const events = s.events;
    if (events !== null) {
      this.raw(EVENTS);
      for (let i = 0; i < events.length; i++) {
        if (i > 0) this.comma();
        const e = events[i];
        this.raw(EVENT_TIME);
        this.nanos(e.time);
        this.raw(EVENT_NAME);
        this.str(e.name);
        this.raw(EVENT_ATTRIBUTES);
        this.attributes(e.attributes);
        this.raw(EVENT_END);
      }
    }
    this.raw(STATUS);
    this.uint(s.status);
    this.raw(SPAN_END);
  }
}

/**
 * One batch of spans as the JSON body of an export (`ExportTraceServiceRequest`), in UTF-8:
 * `resource` (its attributes as pairs, `service.name` first) and the spans, under one scope
 * named `scalwsd`. A span is written when it is added, so the span object is garbage at once
 * (a queue of span objects was copied by every young-generation GC while it waited); `reset`
 * empties the batch for reuse, keeping its buffer.
 */
export class SpanBatch {
  readonly #out = new Out();
  readonly #prefix: number;
  /** Spans written. */
  count = 0;

  constructor(resource: readonly AttributeValue[]) {
    const out = this.#out;
    out.raw(RESOURCE_START);
    out.attributes(resource);
    out.raw(SCOPE_START);
    this.#prefix = out.at;
  }

  /** Writes `span` (finished: its end, events and attributes are final). */
  add(span: Span): void {
    if (this.count > 0) this.#out.comma();
    this.#out.span(span);
    this.count++;
  }

  /** The export's body: a view of the buffer, valid until the next `add` or `reset`. */
  body(): Uint8Array<ArrayBuffer> {
    const out = this.#out;
    const at = out.at;
    out.raw(BATCH_END);
    const bytes = out.buf.subarray(0, out.at);
    out.at = at;
    return bytes;
  }

  /** Empties the batch; the buffer stays. */
  reset(): void {
    this.#out.at = this.#prefix;
    this.count = 0;
  }
}
