/**
 * A small OTLP/HTTP trace receiver for tests (no collector package is at hand): `POST
 * /v1/traces` with a JSON `ExportTraceServiceRequest` on 127.0.0.1:0. It checks what it gets
 * as a collector would (method, path, content type, ids in hex, 64-bit times as decimal
 * strings) and keeps every span, flattened; a body it cannot read is a 400 and a recorded
 * error. `mode` makes it answer 500, or hold each export until set back to `ok` (slow).
 *
 *     await using otlp = startOtlpReceiver();
 *     // server.tracing.endpoint: otlp.url
 *     const spans = await otlp.waitFor("two spans", (s) => s.length >= 2);
 */
import { waitUntil } from "./wait.ts";

/** One received span, its attributes as a plain object. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** "" for a root. */
  readonly parentSpanId: string;
  readonly traceState: string;
  readonly name: string;
  /** 2 server, 3 client. */
  readonly kind: number;
  readonly start: bigint;
  readonly end: bigint;
  readonly attributes: Record<string, string | number | boolean>;
  readonly events: { name: string; attributes: Record<string, string | number | boolean> }[];
  /** 0 unset, 2 error. */
  readonly status: number;
  /** The resource's attributes (`service.name`). */
  readonly resource: Record<string, string | number | boolean>;
}

export interface OtlpReceiver extends AsyncDisposable {
  /** `http://127.0.0.1:PORT/v1/traces`. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Export requests received (answered or not). */
  readonly requests: number;
  /** The headers of the latest export request. */
  readonly lastHeaders: Headers | null;
  /** What was wrong with bodies it could not read. */
  readonly errors: string[];
  /** `ok` (200), `fail` (500), `slow` (held until the mode changes or the receiver closes). */
  mode: "ok" | "fail" | "slow";
  /** The spans once `ready(spans)` holds (bounded wait, 5 s default). */
  waitFor(
    what: string,
    ready: (spans: ReceivedSpan[]) => boolean,
    timeoutMs?: number,
  ): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

type Attr = Record<string, string | number | boolean>;

const HEX_32 = /^[0-9a-f]{32}$/;
const HEX_16 = /^[0-9a-f]{16}$/;

function attributes(list: unknown, where: string): Attr {
  if (list === undefined) return {};
  if (!Array.isArray(list)) throw new Error(`${where}: attributes is not a list`);
  const out: Attr = {};
  for (const kv of list) {
    const v = kv?.value;
    if (typeof kv?.key !== "string" || typeof v !== "object" || v === null) {
      throw new Error(`${where}: malformed attribute ${JSON.stringify(kv)}`);
    }
    if (typeof v.stringValue === "string") out[kv.key] = v.stringValue;
    else if (typeof v.intValue === "string" && /^-?[0-9]+$/.test(v.intValue)) {
      out[kv.key] = Number(v.intValue);
    } else if (typeof v.intValue === "number") out[kv.key] = v.intValue;
    else if (typeof v.boolValue === "boolean") out[kv.key] = v.boolValue;
    else throw new Error(`${where}: unsupported value of ${kv.key}: ${JSON.stringify(v)}`);
  }
  return out;
}

function nanos(v: unknown, where: string): bigint {
  if (typeof v !== "string" || !/^[0-9]{1,20}$/.test(v)) {
    throw new Error(`${where}: time ${JSON.stringify(v)} is not a decimal string`);
  }
  return BigInt(v);
}

/** The spans of one `ExportTraceServiceRequest`; throws naming what is wrong. */
export function readExport(body: unknown): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  const rs = (body as { resourceSpans?: unknown })?.resourceSpans;
  if (!Array.isArray(rs)) throw new Error("resourceSpans is not a list");
  for (const r of rs) {
    const resource = attributes(r?.resource?.attributes, "resource");
    if (!Array.isArray(r?.scopeSpans)) throw new Error("scopeSpans is not a list");
    for (const ss of r.scopeSpans) {
      if (!Array.isArray(ss?.spans)) throw new Error("spans is not a list");
      for (const s of ss.spans) {
        const where = `span ${s?.name}`;
        if (!HEX_32.test(s?.traceId)) throw new Error(`${where}: bad traceId ${s?.traceId}`);
        if (!HEX_16.test(s?.spanId)) throw new Error(`${where}: bad spanId ${s?.spanId}`);
        const parent = s.parentSpanId ?? "";
        if (parent !== "" && !HEX_16.test(parent)) throw new Error(`${where}: bad parentSpanId`);
        if (typeof s.name !== "string" || typeof s.kind !== "number") {
          throw new Error(`${where}: name or kind missing`);
        }
        const start = nanos(s.startTimeUnixNano, where);
        const end = nanos(s.endTimeUnixNano, where);
        if (end < start) throw new Error(`${where}: ends before it starts`);
        const events = (s.events ?? []).map((e: { name: string; attributes: unknown }) => {
          nanos((e as { timeUnixNano?: unknown }).timeUnixNano, `${where} event`);
          return { name: e.name, attributes: attributes(e.attributes, `${where} event`) };
        });
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: parent,
          traceState: s.traceState ?? "",
          name: s.name,
          kind: s.kind,
          start,
          end,
          attributes: attributes(s.attributes, where),
          events,
          status: s.status?.code ?? 0,
          resource,
        });
      }
    }
  }
  return out;
}

/** Starts a receiver on 127.0.0.1:0. */
export function startOtlpReceiver(): OtlpReceiver {
  let release: (() => void) | null = null;
  let held = new Promise<void>((r) => release = r);
  let mode: OtlpReceiver["mode"] = "ok";
  const r = {
    spans: [] as ReceivedSpan[],
    requests: 0,
    lastHeaders: null as Headers | null,
    errors: [] as string[],
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    r.requests++;
    r.lastHeaders = req.headers;
    const url = new URL(req.url);
    if (req.method !== "POST" || url.pathname !== "/v1/traces") {
      return new Response("not found", { status: 404 });
    }
    const text = await req.text();
    if (mode === "slow") await held;
    if (mode === "fail") return new Response("failing", { status: 500 });
    if (req.headers.get("content-type") !== "application/json") {
      r.errors.push(`content-type ${req.headers.get("content-type")}`);
      return new Response("unsupported media type", { status: 415 });
    }
    try {
      r.spans.push(...readExport(JSON.parse(text)));
    } catch (err) {
      r.errors.push((err as Error).message);
      return new Response("bad request", { status: 400 });
    }
    return new Response("{}", { headers: { "content-type": "application/json" } });
  });
  const close = async () => {
    release?.();
    await server.shutdown();
  };
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1/traces`,
    get spans() {
      return r.spans;
    },
    get requests() {
      return r.requests;
    },
    get lastHeaders() {
      return r.lastHeaders;
    },
    get errors() {
      return r.errors;
    },
    get mode() {
      return mode;
    },
    set mode(m) {
      if (mode === "slow" && m !== "slow") {
        release?.();
        held = new Promise<void>((res) => release = res);
      }
      mode = m;
    },
    waitFor: (what, ready, timeoutMs = 5_000) =>
      waitUntil(() => ready(r.spans) ? r.spans : undefined, { what, timeoutMs }),
    close,
    [Symbol.asyncDispose]: close,
  };
}
