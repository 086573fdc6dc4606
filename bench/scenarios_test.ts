import assert from "node:assert/strict";
import {
  fairKeepalive,
  keepsAlive,
  runsOn,
  SCENARIOS,
  selectScenarios,
  selectServers,
} from "./scenarios.ts";

Deno.test("selectScenarios keeps the run order and refuses unknown names", () => {
  assert.equal(selectScenarios(undefined).length, SCENARIOS.length);
  assert.deepEqual(selectScenarios("pool-rr, get-64").map((s) => s.name), ["get-64", "pool-rr"]);
  assert.throws(() => selectScenarios("get-65"), /Unknown scenario "get-65" \(known: get-64, /);
});

Deno.test("selectServers takes each name once and refuses unknown ones", () => {
  assert.deepEqual(selectServers(""), ["scalwsd", "nginx", "haproxy", "varnish", "floor"]);
  assert.deepEqual(selectServers("nginx,scalwsd,nginx"), ["nginx", "scalwsd"]);
  assert.throws(() => selectServers("envoy"), /Unknown server "envoy"/);
});

Deno.test("the headline comes first and pool-1 runs on scalwsd only", () => {
  assert.equal(SCENARIOS[0].name, "get-64");
  assert.equal(SCENARIOS[0].connections, 64);
  assert.deepEqual(SCENARIOS.find((s) => s.name === "pool-1")?.servers, ["scalwsd"]);
});

Deno.test("Varnish runs only the cache scenarios", () => {
  const on = (name: string) =>
    (["scalwsd", "nginx", "haproxy", "varnish"] as const).filter((v) =>
      runsOn(SCENARIOS.find((s) => s.name === name)!, v)
    );
  assert.deepEqual(on("get-64"), ["scalwsd", "nginx", "haproxy"]);
  assert.equal(runsOn(SCENARIOS.find((s) => s.name === "get-64")!, "floor"), true);
  assert.deepEqual(on("cache-hit"), ["scalwsd", "nginx", "varnish"]);
  assert.deepEqual(on("miss-storm"), ["scalwsd", "nginx", "varnish"]);
  assert.deepEqual(on("cache-hit-disk"), ["scalwsd", "nginx"]);
  assert.deepEqual(on("respond"), ["scalwsd"]);
});

Deno.test("floor runs the single-member scenarios only; idle-10k holds 10,000 connections", () => {
  const floor = SCENARIOS.filter((s) => runsOn(s, "floor")).map((s) => s.name);
  assert.deepEqual(floor, ["get-64", "get-512", "close-64", "get-16k", "get-1m", "post-64k"]);
  const idle = SCENARIOS.find((s) => s.name === "idle-10k");
  assert.deepEqual([idle?.idle, idle?.servers], [10_000, ["scalwsd", "nginx"]]);
});

Deno.test("fairKeepalive keeps as many idle member connections as the most clients", () => {
  assert.equal(fairKeepalive(selectScenarios("get-64,pool-rr")), 64);
  assert.equal(fairKeepalive(selectScenarios("get-64,get-512")), 512);
  // idle-10k and the TLS scenarios have no member load: left out.
  assert.equal(fairKeepalive(selectScenarios("idle-10k,tls-get-64")), 64);
  assert.equal(fairKeepalive(SCENARIOS), 512);
});

Deno.test("keepsAlive is false for close-64, the TLS and the idle scenarios", () => {
  const names = SCENARIOS.filter(keepsAlive).map((s) => s.name);
  assert.ok(names.includes("get-64") && names.includes("post-64k") && names.includes("pool-rr"));
  for (const n of ["close-64", "tls-get-64", "tls-new", "idle-10k"]) assert.ok(!names.includes(n));
});
