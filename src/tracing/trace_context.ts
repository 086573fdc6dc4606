/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): reading a `traceparent` a client
 * sent, and the `tracestate` that goes with it. Strict: a field that is not exactly what the
 * recommendation writes is ignored (the request is then traced as a new root, or not at all).
 *
 * It does not decide sampling (`tracer.ts`) and writes no header (`Span.traceparent`).
 *
 * @module
 */

/** A parent's context as a `traceparent` carries it. */
export interface ParentContext {
  /** 32 lower-case hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lower-case hex digits, not all zero: the caller's span. */
  readonly spanId: string;
  /** The `sampled` flag (bit 0 of trace-flags). */
  readonly sampled: boolean;
}

/** A `tracestate` longer than this is dropped (the recommendation's own bound is 512). */
const MAX_TRACESTATE = 512;

function isHex(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

function allZero(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (s.charCodeAt(i) !== 48) return false;
  return true;
}

/**
 * The `sampled` flag of a valid `traceparent` without building anything: true, false, or null
 * when the value is not a valid `traceparent`.
 */
export function sampledFlag(value: string): boolean | null {
  const n = value.length;
  // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55.
  if (n < 55) return null;
  if (!isHex(value, 0, 2) || value.charCodeAt(2) !== 45) return null;
  const v00 = value.charCodeAt(0) === 48 && value.charCodeAt(1) === 48;
  // Version ff is invalid; version 00 is exactly 55 characters; a later version may add
  // fields after a "-".
  if (value.charCodeAt(0) === 102 && value.charCodeAt(1) === 102) return null;
  if (v00 ? n !== 55 : n > 55 && value.charCodeAt(55) !== 45) return null;
  if (!isHex(value, 3, 35) || allZero(value, 3, 35) || value.charCodeAt(35) !== 45) return null;
  if (!isHex(value, 36, 52) || allZero(value, 36, 52) || value.charCodeAt(52) !== 45) return null;
  if (!isHex(value, 53, 55)) return null;
  const low = value.charCodeAt(54);
  // The last hex digit's low bit.
  return ((low <= 57 ? low - 48 : low - 87) & 1) === 1;
}

/** The parent a `traceparent` names, or null when it is not valid. */
export function parseTraceparent(value: string): ParentContext | null {
  const sampled = sampledFlag(value);
  if (sampled === null) return null;
  return { traceId: value.slice(3, 35), spanId: value.slice(36, 52), sampled };
}

/**
 * The `tracestate` to keep with a believed parent: the value as received when it is at most 512
 * printable ASCII characters, else "" (dropped, as the recommendation allows).
 */
export function keepTracestate(value: string | null): string {
  if (value === null || value.length > MAX_TRACESTATE) return "";
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return "";
  }
  return value.trim();
}
