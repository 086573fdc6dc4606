import assert from "node:assert/strict";
import { SpanBatch } from "./otlp_json.ts";
import type { AttributeValue } from "./span.ts";
import { Span, SPAN_KIND_CLIENT, STATUS_ERROR } from "./span.ts";

const sink = { enqueue() {} };

function decode(bytes: Uint8Array): unknown {
  return JSON.parse(new TextDecoder().decode(bytes));
}

function encode(resource: AttributeValue[], spans: Span[], batch = new SpanBatch(resource)) {
  batch.reset();
  for (const s of spans) batch.add(s);
  return batch.body();
}

Deno.test("SpanBatch: an ExportTraceServiceRequest with ids in hex, times as strings", () => {
  const s = new Span(
    sink,
    "a".repeat(32),
    "b".repeat(16),
    "c".repeat(16),
    "v=1",
    "GET",
    3,
    1_700_000_000_123.25,
  );
  s.set("http.request.method", "GET");
  s.set("server.port", 8080);
  s.set("negative", -12);
  s.set("zero", 0);
  s.set("flag", true);
  s.event("retry", ["scalws.retry_reason", "status"]);
  s.status = STATUS_ERROR;
  s.end = 1_700_000_000_124.5;
  const doc = decode(encode(["service.name", "svc"], [s])) as {
    resourceSpans: {
      resource: unknown;
      scopeSpans: { scope: unknown; spans: Record<string, unknown>[] }[];
    }[];
  };
  const r = doc.resourceSpans[0];
  assert.deepEqual(r.resource, {
    attributes: [{ key: "service.name", value: { stringValue: "svc" } }],
  });
  assert.deepEqual(r.scopeSpans[0].scope, { name: "scalwsd" });
  const span = r.scopeSpans[0].spans[0];
  const event = (span.events as { timeUnixNano: string }[])[0];
  assert.match(event.timeUnixNano, /^[0-9]{19}$/);
  assert.deepEqual(span, {
    traceId: "a".repeat(32),
    spanId: "b".repeat(16),
    parentSpanId: "c".repeat(16),
    traceState: "v=1",
    name: "GET",
    kind: SPAN_KIND_CLIENT,
    startTimeUnixNano: "1700000000123250000",
    endTimeUnixNano: "1700000000124500000",
    attributes: [
      { key: "http.request.method", value: { stringValue: "GET" } },
      { key: "server.port", value: { intValue: "8080" } },
      { key: "negative", value: { intValue: "-12" } },
      { key: "zero", value: { intValue: "0" } },
      { key: "flag", value: { boolValue: true } },
    ],
    events: [{
      timeUnixNano: event.timeUnixNano,
      name: "retry",
      attributes: [{ key: "scalws.retry_reason", value: { stringValue: "status" } }],
    }],
    status: { code: STATUS_ERROR },
  });
});

Deno.test("SpanBatch: any string survives: quotes, backslashes, controls, non-ASCII", () => {
  const odd = 'a"b\\c\n\t\u0000\u007fé€😀';
  const s = new Span(sink, "a".repeat(32), "b".repeat(16), "", "", odd, 2, 1);
  s.set("user_agent.original", odd);
  s.end = 2;
  const batch = new SpanBatch(["service.name", "x"]);
  const spans = (decode(encode([], [s], batch)) as {
    resourceSpans: {
      scopeSpans: {
        spans: {
          name: string;
          parentSpanId?: string;
          attributes: { value: { stringValue: string } }[];
        }[];
      }[];
    }[];
  }).resourceSpans[0].scopeSpans[0].spans;
  assert.equal(spans[0].name, odd);
  assert.equal(spans[0].parentSpanId, undefined);
  assert.equal(spans[0].attributes[0].value.stringValue, odd);
  // The buffer is reused and grows: a large batch after a small one is whole.
  const many = Array.from({ length: 600 }, () => s);
  const big = decode(encode(["service.name", "x"], many, batch)) as {
    resourceSpans: { scopeSpans: { spans: unknown[] }[] }[];
  };
  assert.equal(big.resourceSpans[0].scopeSpans[0].spans.length, 600);
});
