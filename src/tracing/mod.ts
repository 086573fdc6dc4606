/**
 * OpenTelemetry tracing (`server.tracing`): the tracer that samples requests and exports their
 * spans over OTLP/HTTP, the span the request path fills in, and W3C Trace Context parsing.
 *
 * @module
 */

export { MAX_BATCH, type TraceHeaders, Tracer, type TracerDeps } from "./tracer.ts";
export {
  type AttributeValue,
  Span,
  SPAN_KIND_CLIENT,
  SPAN_KIND_SERVER,
  STATUS_ERROR,
  wallMs,
} from "./span.ts";
export { keepTracestate, parseTraceparent, sampledFlag } from "./trace_context.ts";
export { SpanBatch } from "./otlp_json.ts";
export { type SpanMethod, spanMethod } from "./http_method.ts";
