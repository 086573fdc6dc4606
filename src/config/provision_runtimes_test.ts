import assert from "node:assert/strict";
import type { Draft, Sink } from "./provision_draft.ts";
import { chooseRuntime, DEFAULT_FASTCGI } from "./provision_runtimes.ts";

function runtime(runtimeValue: unknown, proxyValue?: unknown) {
  const sink: Sink = { errors: [], warnings: [] };
  const draft: Draft = {
    pools: new Map(),
    poolNames: new Set(),
    tenants: [],
    poolRefs: [],
    allApplications: true,
  };
  const config = chooseRuntime(runtimeValue, proxyValue, ["app"], draft, sink);
  return { config, sink, draft };
}

Deno.test("chooseRuntime: exactly one of runtime and proxy", () => {
  assert.deepEqual(runtime({ type: "static", root: "/" }, { upstream: "http://x" }).sink.errors, [
    "app: runtime and proxy are mutually exclusive",
  ]);
  assert.deepEqual(runtime(undefined).sink.errors, ["app.runtime: is required"]);
});

Deno.test("chooseRuntime: php defaults and its pool reference", () => {
  const php = runtime({ type: "php", root: "/srv" }).config;
  assert.deepEqual(php, {
    type: "php",
    fastcgi: {
      kind: "address",
      address: { kind: "unix", path: "/run/php/php-fpm.sock", canonical: DEFAULT_FASTCGI },
      max_conns: 0,
      max_queue: 256,
    },
    root: "/srv",
    index: "index.php",
    follow_symlinks: "inside_root",
    allowed_roots: [],
    params: {},
    connect_timeout: 5_000,
    response_timeout: 60_000,
  });
  const { draft } = runtime({ type: "php", root: "/srv", fastcgi: { pool: "fpm" } });
  assert.deepEqual(draft.poolRefs, [
    { pool: "fpm", path: "app.runtime.fastcgi.pool", protocol: "fastcgi" },
  ]);
});

Deno.test("chooseRuntime: an application must be given {socket} or {port}, not both", () => {
  assert.deepEqual(runtime({ type: "app", command: ["srv"] }).sink.errors, [
    "app.runtime.command: must pass {socket} or {port} to the application (in command or env)",
  ]);
  assert.deepEqual(
    runtime({ type: "app", command: ["srv", "{socket}"], env: { P: "{port}" } }).sink.errors,
    ["app.runtime: use {socket} or {port}, not both"],
  );
  const node = runtime({ type: "node" }).config;
  assert.ok(node?.type === "app");
  assert.deepEqual([node.command, node.env, node.listen], [
    ["node", "server.js"],
    { PORT: "{socket}" },
    "socket",
  ]);
});

Deno.test("chooseRuntime: a proxy needs upstream or backends; backends need a positive weight", () => {
  assert.deepEqual(runtime(undefined, {}).sink.errors, [
    "app.proxy: upstream or backends is required",
  ]);
  assert.deepEqual(
    runtime(undefined, { backends: [{ pool: "a", weight: 0 }, { status: 503, weight: 0 }] }).sink
      .errors,
    ["app.proxy.backends: at least one backend needs a weight above 0"],
  );
});
