/**
 * OTLP/HTTP JSON encoding of a batch of spans (`ExportTraceServiceRequest`, as the
 * OpenTelemetry protocol's JSON mapping writes it: ids in hex, 64-bit integers as strings,
 * enums as numbers). Built as one string; strings that may hold anything (paths, user agents)
 * go through `JSON.stringify`, the others (ids, numbers, known keys) are written as they are.
 *
 * @module
 */

import type { AttributeValue, Span } from "./span.ts";

/** Unix nanoseconds, as a decimal string, for wall-clock milliseconds. */
export function unixNano(ms: number): string {
  const whole = Math.floor(ms);
  const frac = Math.min(999_999, Math.round((ms - whole) * 1e6));
  return whole + String(frac).padStart(6, "0");
}

function attributes(list: readonly AttributeValue[]): string {
  let s = "";
  for (let i = 0; i < list.length; i += 2) {
    const v = list[i + 1];
    s += (i === 0 ? '{"key":"' : ',{"key":"') + list[i] + '","value":' +
      (typeof v === "string"
        ? '{"stringValue":' + JSON.stringify(v) + "}}"
        : typeof v === "number"
        ? '{"intValue":"' + Math.trunc(v) + '"}}'
        : '{"boolValue":' + v + "}}");
  }
  return s;
}

function span(s: Span): string {
  let out = '{"traceId":"' + s.traceId + '","spanId":"' + s.spanId + '"';
  if (s.parentId !== "") out += ',"parentSpanId":"' + s.parentId + '"';
  if (s.traceState !== "") out += ',"traceState":' + JSON.stringify(s.traceState);
  out += ',"name":' + JSON.stringify(s.name) + ',"kind":' + s.kind +
    ',"startTimeUnixNano":"' + unixNano(s.start) + '","endTimeUnixNano":"' + unixNano(s.end) +
    '","attributes":[' + attributes(s.attributes) + "]";
  const events = s.events;
  if (events !== null) {
    out += ',"events":[';
    for (let i = 0; i < events.length; i++) {
      const e = events[i];
      out += (i === 0 ? "" : ",") + '{"timeUnixNano":"' + unixNano(e.time) + '","name":' +
        JSON.stringify(e.name) + ',"attributes":[' + attributes(e.attributes) + "]}";
    }
    out += "]";
  }
  return out + ',"status":{"code":' + s.status + "}}";
}

/**
 * The JSON body of one export: `resource` (its attributes as pairs, `service.name` first) and
 * the spans, under one scope named `scalwsd`.
 */
export function encodeSpans(resource: readonly AttributeValue[], spans: readonly Span[]): string {
  let out = '{"resourceSpans":[{"resource":{"attributes":[' + attributes(resource) +
    ']},"scopeSpans":[{"scope":{"name":"scalwsd"},"spans":[';
  for (let i = 0; i < spans.length; i++) out += (i === 0 ? "" : ",") + span(spans[i]);
  return out + "]}]}]}";
}
