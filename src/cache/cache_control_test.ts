import assert from "node:assert/strict";
import { DELTA_MAX, parseCacheControl } from "./cache_control.ts";

Deno.test("parseCacheControl reads the directives a shared cache acts on", () => {
  const cc = parseCacheControl(
    'public, max-age=60, s-maxage="120", stale-while-revalidate=30, stale-if-error=5, must-revalidate',
  );
  assert.equal(cc.maxAge, 60);
  assert.equal(cc.sMaxage, 120);
  assert.equal(cc.staleWhileRevalidate, 30);
  assert.equal(cc.staleIfError, 5);
  assert.equal(cc.public, true);
  assert.equal(cc.mustRevalidate, true);
  assert.equal(cc.invalid, false);
});

Deno.test("parseCacheControl is case-insensitive and ignores unknown extensions", () => {
  const cc = parseCacheControl('NO-STORE, Private="set-cookie", community="UCI", immutable');
  assert.equal(cc.noStore, true);
  assert.equal(cc.private, true);
  assert.equal(cc.invalid, false);
  assert.equal(cc.maxAge, -1);
});

Deno.test("parseCacheControl marks malformed or repeated values invalid", () => {
  assert.equal(parseCacheControl("max-age=abc").invalid, true);
  assert.equal(parseCacheControl("max-age=").invalid, true);
  assert.equal(parseCacheControl("max-age=-1").invalid, true);
  assert.equal(parseCacheControl("max-age=1, max-age=2").invalid, true);
  assert.equal(parseCacheControl('no-cache="a').invalid, true);
  assert.equal(parseCacheControl("max age=1").invalid, true);
});

Deno.test("parseCacheControl caps delta-seconds and reads request directives", () => {
  assert.equal(parseCacheControl("max-age=99999999999999").maxAge, DELTA_MAX);
  const r = parseCacheControl("no-cache, max-stale, min-fresh=10, only-if-cached");
  assert.equal(r.noCache, true);
  assert.equal(r.maxStale, Infinity);
  assert.equal(r.minFresh, 10);
  assert.equal(r.onlyIfCached, true);
  assert.equal(parseCacheControl(null).maxAge, -1);
});

Deno.test("parseCacheControl reads immutable (RFC 8246)", () => {
  assert.equal(parseCacheControl("max-age=60, immutable").immutable, true);
  assert.equal(parseCacheControl("max-age=60").immutable, false);
});
