import assert from "node:assert/strict";
import { Series } from "../observe/mod.ts";
import { setLogSink } from "../observe/log.ts";
import { MAX_BATCH, Tracer } from "./tracer.ts";
import type { TracingConfig } from "../config/mod.ts";

const T = "4bf92f3577b34da6a3ce929d0e0e4736";
const S = "00f067aa0ba902b7";

function config(o: Partial<TracingConfig> = {}): TracingConfig {
  return {
    endpoint: "http://127.0.0.1:1/v1/traces",
    sample_ratio: 1,
    service_name: "svc",
    headers: {},
    trust_client: false,
    queue_size: 2048,
    ...o,
  };
}

function headers(h: Record<string, string>) {
  return { get: (name: string) => h[name] ?? null };
}

/** A collector that counts the spans of each export and answers `status`. */
function collector(status = 200) {
  const batches: number[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const doc = await req.json();
    batches.push(doc.resourceSpans[0].scopeSpans[0].spans.length);
    return new Response("{}", { status });
  });
  return { url: `http://127.0.0.1:${server.addr.port}/v1/traces`, batches, server };
}

Deno.test("Tracer.start: sample_ratio without a believed parent", () => {
  let r = 0.4;
  const t = new Tracer(config({ sample_ratio: 0.5 }), {
    dropped: new Series(""),
    random: () => r,
  });
  const none = headers({});
  const s = t.start(none, false, performance.now())!;
  assert.match(s.traceId, /^[0-9a-f]{32}$/);
  assert.match(s.spanId, /^[0-9a-f]{16}$/);
  assert.equal(s.parentId, "");
  r = 0.6;
  assert.equal(t.start(none, false, performance.now()), null);
  // A context that is not believed changes nothing.
  assert.equal(t.start(headers({ traceparent: `00-${T}-${S}-01` }), false, 0), null);
});

Deno.test("Tracer.start: a believed parent decides alone (parent-based)", () => {
  const t = new Tracer(config({ sample_ratio: 0 }), { dropped: new Series("") });
  const s = t.start(
    headers({ traceparent: `00-${T}-${S}-01`, tracestate: "v=1" }),
    true,
    performance.now(),
  )!;
  assert.equal(s.traceId, T);
  assert.equal(s.parentId, S);
  assert.equal(s.traceState, "v=1");
  assert.notEqual(s.spanId, S);
  const always = new Tracer(config({ sample_ratio: 1 }), { dropped: new Series("") });
  assert.equal(always.start(headers({ traceparent: `00-${T}-${S}-00` }), true, 0), null);
  // An invalid one is ignored: the ratio decides.
  assert.equal(always.start(headers({ traceparent: "garbage" }), true, 0)!.parentId, "");
});

Deno.test("Tracer: a full queue drops and counts; close exports what is queued", async () => {
  const c = collector();
  try {
    const dropped = new Series("");
    const t = new Tracer(config({ endpoint: c.url, queue_size: 3 }), {
      dropped,
      batchDelay: 60_000,
    });
    for (let i = 0; i < 5; i++) t.start(headers({}), false, performance.now())!.finish();
    assert.equal(t.queued, 3);
    assert.equal(dropped.value, 2);
    await t.close();
    assert.deepEqual(c.batches, [3]);
    // Closed: later spans are dropped.
    t.start(headers({}), false, performance.now())!.finish();
    assert.equal(dropped.value, 3);
  } finally {
    await c.server.shutdown();
  }
});

Deno.test("Tracer: 512 spans go at once, the rest after the batch delay", async () => {
  const c = collector();
  try {
    const t = new Tracer(config({ endpoint: c.url }), {
      dropped: new Series(""),
      batchDelay: 100,
    });
    const started = performance.now();
    for (let i = 0; i < MAX_BATCH + 10; i++) t.start(headers({}), false, started)!.finish();
    await t.flush();
    assert.deepEqual(c.batches, [MAX_BATCH]);
    for (let i = 0; i < 100 && c.batches.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.deepEqual(c.batches, [MAX_BATCH, 10]);
    assert.ok(performance.now() - started >= 100);
    await t.close();
  } finally {
    await c.server.shutdown();
  }
});

Deno.test("Tracer: an export answered 500 counts its spans as dropped", async () => {
  const c = collector(500);
  const logged: string[] = [];
  setLogSink((l) => logged.push(l));
  try {
    const dropped = new Series("");
    const t = new Tracer(config({ endpoint: c.url }), { dropped, batchDelay: 60_000 });
    for (let i = 0; i < 4; i++) t.start(headers({}), false, performance.now())!.finish();
    await t.flush();
    assert.deepEqual(c.batches, [4]);
    assert.equal(dropped.value, 4);
    assert.equal(logged.filter((l) => l.includes('"tracing_export_failed"')).length, 1);
    await t.close();
  } finally {
    setLogSink(null);
    await c.server.shutdown();
  }
});
