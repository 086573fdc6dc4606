import assert from "node:assert/strict";
import { ManualClock } from "../base/clock.ts";
import { Cache, CacheCounters } from "../cache/cache.ts";
import type { CacheConfig } from "../config/types.ts";
import { type Answer, FrontAnswer, type PullBody, pullStream } from "../front/answer.ts";
import { createMetrics } from "../observe/families.ts";
import { Registry } from "../observe/metrics.ts";
import type { Exchange, Handler } from "../pipeline/exchange.ts";
import { testExchange } from "../../tests/_support/test_exchange.ts";
import { CachedHandler } from "./cached.ts";

const CONFIG: CacheConfig = {
  stale_while_revalidate: 60_000,
  stale_if_error: 0,
  stale_if_disconnected: 0,
  max_object_size: 1024,
  key_headers: [],
  ignore_query: false,
  store_set_cookie: false,
  targeted_field: "cdn-cache-control",
};

const metrics = createMetrics(new Registry());

/** An exchange as a front makes it; `raw`: scalwsd's own front (FrontAnswers allowed). */
function exchange(raw: boolean, headers: Record<string, string> = {}, method = "GET"): Exchange {
  return testExchange("/x", { host: "a.test", raw, headers, method });
}

/** A member answering like the proxy: a FrontAnswer on the front, else a Response. */
class Inner implements Handler {
  calls = 0;
  constructor(
    private readonly body: () => Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | PullBody,
    private readonly headers: [string, string][] = [["cache-control", "max-age=60"]],
  ) {}
  handle(ex: Exchange): Answer {
    this.calls++;
    const body = this.body();
    if (!(body instanceof Uint8Array)) ex.deferCompletion();
    const headers = this.headers.map((p) => [p[0], p[1]] as [string, string]);
    return ex.answer(200, headers, body);
  }
}

function cached(inner: Handler, clock = new ManualClock()): CachedHandler {
  return new CachedHandler({
    inner,
    cache: new Cache(1 << 20, clock),
    config: CONFIG,
    counters: new CacheCounters("t", "a", metrics.cacheRequests),
    owner: "t/a",
  });
}

function field(a: FrontAnswer, name: string): string | undefined {
  return a.headers.find((p) => p[0] === name)?.[1];
}

async function text(a: Answer): Promise<string> {
  if (a instanceof Response) return await a.text();
  if (a.body === null) return "";
  if (a.body instanceof Uint8Array) return new TextDecoder().decode(a.body);
  const b = a.body;
  return await new Response(b instanceof ReadableStream ? b : pullStream(b)).text();
}

Deno.test("on scalwsd's own front, misses read a FrontAnswer and hits, HEAD and 304 answer with one", async () => {
  // The member's bytes are a view of a buffer it reuses: the store keeps a copy.
  const buf = new TextEncoder().encode("hello");
  const inner = new Inner(() => buf, [["cache-control", "max-age=60"], ["etag", '"v1"']]);
  const c = cached(inner);
  const miss = await c.handle(exchange(true));
  assert.ok(miss instanceof FrontAnswer);
  assert.equal(
    field(miss, "cache-status"),
    "scalwsd; fwd=uri-miss; fwd-status=200; stored; ttl=60",
  );
  assert.equal(await text(miss), "hello");
  buf.fill(0x78);

  const hit = c.handle(exchange(true));
  assert.ok(hit instanceof FrontAnswer, "a hit is answered without a Promise or a Response");
  assert.equal(hit.status, 200);
  assert.equal(await text(hit), "hello");
  assert.equal(field(hit, "etag"), '"v1"');
  assert.equal(field(hit, "age"), "0");
  assert.equal(field(hit, "cache-status"), "scalwsd; hit; ttl=60");

  const head = c.handle(exchange(true, {}, "HEAD"));
  assert.ok(head instanceof FrontAnswer);
  assert.equal(head.body, null);
  assert.equal(field(head, "content-length"), "5");

  const nm = c.handle(exchange(true, { "if-none-match": '"v1"' }));
  assert.ok(nm instanceof FrontAnswer);
  assert.equal(nm.status, 304);
  assert.equal(nm.body, null);
  assert.equal(field(nm, "etag"), '"v1"');
  assert.equal(inner.calls, 1);

  // Deno.serve's exchanges still get Responses from the same entry.
  const web = c.handle(exchange(false));
  assert.ok(web instanceof Response);
  assert.equal(await web.text(), "hello");
  assert.equal(web.headers.get("cache-status"), "scalwsd; hit; ttl=60");
});

Deno.test("a FrontAnswer's streamed body is stored once it ended whole", async () => {
  const inner = new Inner(() => new Blob(["stre", "amed"]).stream() as ReadableStream<Uint8Array>);
  const c = cached(inner);
  const miss = await c.handle(exchange(true));
  assert.ok(miss instanceof FrontAnswer);
  assert.ok(miss.body instanceof ReadableStream);
  assert.equal(await text(miss), "streamed");
  const hit = c.handle(exchange(true));
  assert.ok(hit instanceof FrontAnswer);
  assert.equal(await text(hit), "streamed");
  assert.equal(inner.calls, 1);
});

Deno.test("a FrontAnswer larger than max_object_size is passed on, not stored", async () => {
  const inner = new Inner(() => new Uint8Array(CONFIG.max_object_size + 1));
  const c = cached(inner);
  const miss = await c.handle(exchange(true));
  assert.ok(miss instanceof FrontAnswer);
  assert.equal(field(miss, "cache-status"), "scalwsd; fwd=uri-miss; fwd-status=200");
  assert.equal((miss.body as Uint8Array).length, CONFIG.max_object_size + 1);
  await c.handle(exchange(true));
  assert.equal(inner.calls, 2);
});

Deno.test("a request's Pragma: no-cache without Cache-Control is no-cache (RFC 9111 5.4)", async () => {
  const inner = new Inner(() => new TextEncoder().encode("x"));
  const c = cached(inner);
  await c.handle(exchange(true));
  await c.handle(exchange(true, { pragma: "No-Cache" }));
  assert.equal(inner.calls, 2, "revalidated with the member");
  // Cache-Control present: Pragma is ignored.
  const hit = await c.handle(exchange(true, { pragma: "no-cache", "cache-control": "max-stale" }));
  assert.ok(hit instanceof FrontAnswer);
  assert.match(field(hit, "cache-status")!, /^scalwsd; hit/);
  assert.equal(inner.calls, 2);
});

/** A member's body pulled chunk by chunk (what the proxy gives on the front). */
class Pulled implements PullBody {
  cancelled = false;
  constructor(private readonly chunks: string[]) {}
  read(): Promise<Uint8Array | null> {
    const c = this.chunks.shift();
    return Promise.resolve(c === undefined ? null : new TextEncoder().encode(c));
  }
  cancel(): void {
    this.cancelled = true;
  }
}

Deno.test("a FrontAnswer's pulled body is stored once it ended whole", async () => {
  const inner = new Inner(() => new Pulled(["pul", "led"]));
  const c = cached(inner);
  const miss = await c.handle(exchange(true));
  assert.ok(miss instanceof FrontAnswer);
  assert.equal(await text(miss), "pulled");
  const hit = c.handle(exchange(true));
  assert.ok(hit instanceof FrontAnswer);
  assert.equal(await text(hit), "pulled");
  assert.equal(inner.calls, 1);
});

Deno.test("a member's 304 to a revalidation with a pulled body: the body is cancelled, the entry served", async () => {
  const clock = new ManualClock();
  let n = 0;
  const bodies: Pulled[] = [];
  const inner: Handler = {
    handle(ex: Exchange): Answer {
      n++;
      const b = new Pulled(n === 1 ? ["one"] : []);
      bodies.push(b);
      ex.deferCompletion();
      const headers: [string, string][] = [["cache-control", "max-age=10"], ["etag", '"e"']];
      return new FrontAnswer(n === 1 ? 200 : 304, headers, b);
    },
  };
  const c = cached(inner, clock);
  assert.equal(await text(await c.handle(exchange(true))), "one");
  clock.advance(20_000);
  const r = await c.handle(exchange(true));
  assert.ok(r instanceof FrontAnswer);
  assert.equal(r.status, 200);
  assert.equal(await text(r), "one");
  assert.equal(n, 2);
  assert.ok(bodies[1].cancelled);
});

Deno.test("an entry with a lifetime of 0 is stored but never served without asking the member", async () => {
  // Expires equal to Date (or max-age=0): stale at once; no stale-while-revalidate allows it.
  const inner = new Inner(() => new TextEncoder().encode("x"), [["cache-control", "max-age=0"]]);
  const c = cached(inner);
  const miss = await c.handle(exchange(true));
  assert.ok(miss instanceof FrontAnswer);
  assert.match(field(miss, "cache-status")!, /stored; ttl=0$/);
  const again = await c.handle(exchange(true));
  assert.ok(again instanceof FrontAnswer);
  assert.equal(field(again, "cache-status"), "scalwsd; fwd=stale; fwd-status=200; stored; ttl=0");
  assert.equal(inner.calls, 2);
});

Deno.test("a member's 5xx for an entry that has just gone stale is passed on without stale-if-error", async () => {
  const clock = new ManualClock();
  let n = 0;
  const inner: Handler = {
    handle(): Answer {
      n++;
      const headers: [string, string][] = [["cache-control", "max-age=1"]];
      return new FrontAnswer(n === 1 ? 200 : 503, headers, new TextEncoder().encode("b" + n));
    },
  };
  const c = cached(inner, clock);
  assert.equal(await text(await c.handle(exchange(true))), "b1");
  clock.advance(1_000);
  const r = await c.handle(exchange(true));
  assert.ok(r instanceof FrontAnswer);
  assert.equal(r.status, 503);
  assert.equal(await text(r), "b2");
});

Deno.test("Expires counts from the member's Date its client kept apart, not from the arrival time", async () => {
  // The member's clock is 400 s ahead; its Expires is 300 s ahead of ours: already expired.
  const clock = new ManualClock(Date.UTC(2026, 11, 1, 12, 0, 0));
  const at = (s: number) => new Date(clock.now() + s * 1000).toUTCString();
  const inner: Handler = {
    handle(ex: Exchange): Answer {
      ex.memberAnswered(at(400));
      return new FrontAnswer(200, [["expires", at(300)]], new TextEncoder().encode("x"));
    },
  };
  let calls = 0;
  const c = cached({ handle: (ex) => (calls++, inner.handle(ex)) }, clock);
  const miss = await c.handle(exchange(true));
  assert.ok(miss instanceof FrontAnswer);
  assert.match(field(miss, "cache-status")!, /stored; ttl=0$/);
  await c.handle(exchange(true));
  assert.equal(calls, 2, "the stale entry went back to the member");
});
