import assert from "node:assert/strict";
import { parseCacheControl } from "./cache_control.ts";
import { type RequestFacts, type ResponseFacts, storability } from "./storable.ts";

const req = (over: Partial<RequestFacts> = {}): RequestFacts => ({
  method: "GET",
  cc: parseCacheControl(null),
  authorization: false,
  reflected: [],
  ...over,
});
const res = (cc: string | null, over: Partial<ResponseFacts> = {}): ResponseFacts => ({
  status: 200,
  cc: parseCacheControl(cc),
  expires: null,
  date: NaN,
  vary: null,
  setCookie: false,
  ...over,
});
const opts = { storeSetCookie: false, keyHeaders: [] as string[] };
const reason = (r: ReturnType<typeof storability>) => (r.ok ? "ok" : r.reason);

Deno.test("storability: explicit freshness only", () => {
  assert.deepEqual(storability(req(), res("max-age=60"), opts), {
    ok: true,
    lifetime: 60,
    vary: [],
  });
  assert.equal(reason(storability(req(), res("public"), opts)), "no explicit freshness");
  assert.equal(reason(storability(req(), res(null), opts)), "no explicit freshness");
});

Deno.test("storability: never stored", () => {
  assert.equal(reason(storability(req({ method: "POST" }), res("max-age=60"), opts)), "method");
  assert.equal(reason(storability(req(), res("max-age=60", { status: 206 }), opts)), "status");
  assert.equal(reason(storability(req(), res("max-age=60", { status: 304 }), opts)), "status");
  assert.equal(reason(storability(req(), res("no-store, max-age=60"), opts)), "no-store");
  assert.equal(
    reason(storability(req({ cc: parseCacheControl("no-store") }), res("max-age=60"), opts)),
    "request no-store",
  );
  assert.equal(reason(storability(req(), res("private, max-age=60"), opts)), "private");
  assert.equal(
    reason(storability(req(), res("max-age=60", { setCookie: true }), opts)),
    "set-cookie",
  );
  assert.equal(reason(storability(req(), res("max-age=60", { vary: "*" }), opts)), "vary *");
  assert.equal(reason(storability(req(), res("max-age=x"), opts)), "malformed cache-control");
});

Deno.test("storability: Authorization needs public, s-maxage or must-revalidate", () => {
  const a = req({ authorization: true });
  assert.equal(reason(storability(a, res("max-age=60"), opts)), "authorization");
  assert.equal(reason(storability(a, res("public, max-age=60"), opts)), "ok");
  assert.equal(reason(storability(a, res("s-maxage=60"), opts)), "ok");
  assert.equal(reason(storability(a, res("must-revalidate, max-age=60"), opts)), "ok");
});

Deno.test("storability: Set-Cookie with the opt-in; no-cache is stored (revalidated)", () => {
  const o = { storeSetCookie: true, keyHeaders: [] };
  assert.equal(reason(storability(req(), res("max-age=60", { setCookie: true }), o)), "ok");
  assert.equal(reason(storability(req(), res("no-cache, max-age=60"), opts)), "ok");
  // Without freshness: stored stale (to be revalidated) when it has a validator and a status
  // RFC 9110 marks heuristically cacheable.
  assert.deepEqual(storability(req(), res("no-cache", { validator: true }), opts), {
    ok: true,
    lifetime: 0,
    vary: [],
  });
  assert.equal(reason(storability(req(), res("no-cache"), opts)), "no explicit freshness");
  assert.equal(
    reason(storability(req(), res("no-cache", { validator: true, status: 201 }), opts)),
    "no explicit freshness",
  );
});

Deno.test("storability: a reflected unkeyed header blocks storing unless keyed or varied", () => {
  const r = req({ reflected: ["x-forwarded-scheme"] });
  assert.equal(reason(storability(r, res("max-age=60"), opts)), "unkeyed x-forwarded-scheme");
  assert.equal(
    reason(storability(r, res("max-age=60", { vary: "X-Forwarded-Scheme" }), opts)),
    "ok",
  );
  assert.equal(
    reason(storability(r, res("max-age=60"), { ...opts, keyHeaders: ["x-forwarded-scheme"] })),
    "ok",
  );
});

Deno.test("storability: Expires against Date", () => {
  const r = res(null, {
    expires: "Thu, 01 Jan 2026 00:01:00 GMT",
    date: Date.UTC(2026, 0, 1),
  });
  assert.deepEqual(storability(req(), r, opts), { ok: true, lifetime: 60, vary: [] });
});

Deno.test("storability: heuristic freshness from Last-Modified only without explicit freshness", () => {
  const D = Date.UTC(2026, 0, 1);
  const lm = new Date(D - 1_000_000).toUTCString();
  const h = { ...opts, heuristicMax: 86_400 };
  const r = storability(req(), res(null, { date: D, lastModified: lm }), h);
  assert.deepEqual(r, { ok: true, lifetime: 100, vary: [] });
  // Explicit freshness wins, even a shorter one.
  const x = storability(req(), res("max-age=5", { date: D, lastModified: lm }), h);
  assert.deepEqual(x, { ok: true, lifetime: 5, vary: [] });
  // Off (heuristic_max: 0s), and a status RFC 9110 does not mark heuristically cacheable.
  assert.equal(
    reason(storability(req(), res(null, { date: D, lastModified: lm }), opts)),
    "no explicit freshness",
  );
  assert.equal(
    reason(storability(req(), res(null, { status: 302, date: D, lastModified: lm }), h)),
    "no explicit freshness",
  );
});

Deno.test("storability: any final status with explicit freshness; must-understand", () => {
  for (const status of [299, 303, 400, 500, 503, 599]) {
    assert.equal(reason(storability(req(), res("max-age=60", { status }), opts)), "ok");
  }
  // Not without explicit freshness (500 is not heuristically cacheable).
  assert.equal(
    reason(
      storability(
        req(),
        res(null, { status: 500, lastModified: "Thu, 01 Dec 1994 16:00:00 GMT" }),
        { ...opts, heuristicMax: 86_400 },
      ),
    ),
    "no explicit freshness",
  );
  // must-understand: a status scalwsd understands is stored despite no-store, another is not.
  const mu = "max-age=3600, no-store, must-understand";
  assert.equal(reason(storability(req(), res(mu), opts)), "ok");
  assert.equal(reason(storability(req(), res(mu, { status: 599 }), opts)), "must-understand");
});
