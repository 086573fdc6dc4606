/** The cache settings of applications, routes and the server: values, defaults and errors. */
import assert from "node:assert/strict";
import type { ConfigError } from "./errors.ts";
import { parseConfig } from "./load.ts";

Deno.test("cache: defaults, a route's own cache or false, server.cache.max_size", () => {
  const { config } = parseConfig(
    `
server:
  listeners: [{name: http, address: "127.0.0.1:8080"}]
  cache: {max_size: 64MiB, heuristic_max: 1h}
tenants:
  - name: acme
    applications:
      - name: www
        domains: [example.com]
        runtime: {type: respond}
        cache: {}
        routes:
          - {path: /off, runtime: {type: respond}, cache: false}
          - path: /own
            runtime: {type: respond}
            cache:
              stale_while_revalidate: 5s
              stale_if_error: 1m
              max_object_size: 1MiB
              key_headers: [X-Theme, x-theme]
              ignore_query: true
              store_set_cookie: true
              targeted_field: Fastly-Cache-Control
`,
    "c.yaml",
  );
  assert.equal(config.server.cache.max_size, 64 * 1024 * 1024);
  assert.equal(config.server.cache.heuristic_max, 3_600_000);
  const app = config.tenants[0].applications[0];
  assert.deepEqual(app.cache, {
    stale_while_revalidate: 60_000,
    stale_if_error: 0,
    stale_if_disconnected: 0,
    max_object_size: 8 * 1024 * 1024,
    key_headers: [],
    ignore_query: false,
    store_set_cookie: false,
    targeted_field: "cdn-cache-control",
  });
  assert.equal(app.routes[0].cache, false);
  assert.deepEqual(app.routes[1].cache, {
    stale_while_revalidate: 5_000,
    stale_if_error: 60_000,
    stale_if_disconnected: 0,
    max_object_size: 1024 * 1024,
    key_headers: ["x-theme"],
    ignore_query: true,
    store_set_cookie: true,
    targeted_field: "fastly-cache-control",
  });
  assert.equal(parseConfig(BASE_FOR_CACHE("{}"), "d.yaml").config.server.cache.max_size, 268435456);
  assert.equal(
    parseConfig(BASE_FOR_CACHE("{}"), "d.yaml").config.server.cache.heuristic_max,
    86_400_000,
  );
});

const BASE_FOR_CACHE = (cache: string, server = "") => `
server:
  listeners: [{name: http, address: "127.0.0.1:8080"}]
${server}
tenants:
  - name: acme
    applications:
      - name: www
        domains: [example.com]
        runtime: {type: respond}
        cache: ${cache}
        routes:
          - {path: /r, runtime: {type: respond}, cache: ${cache}}
`;

Deno.test("cache: every error at once, each naming its path", () => {
  const errorsOf = (text: string) => {
    try {
      parseConfig(text, "e.yaml");
    } catch (e) {
      return (e as ConfigError).errors;
    }
    return [];
  };
  assert.deepEqual(
    errorsOf(BASE_FOR_CACHE("{max_object_size: 2MiB, ttl: 5, stale_if_error: soon}")),
    [
      'tenants[0].applications[0].cache.stale_if_error: invalid duration "soon": write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m',
      'tenants[0].applications[0].cache: unknown key "ttl"',
      'tenants[0].applications[0].routes[0].cache.stale_if_error: invalid duration "soon": write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m',
      'tenants[0].applications[0].routes[0].cache: unknown key "ttl"',
    ],
  );
  assert.deepEqual(errorsOf(BASE_FOR_CACHE("true")), [
    "tenants[0].applications[0].cache: must be a mapping",
    "tenants[0].applications[0].routes[0].cache: must be a mapping or false",
  ]);
  assert.deepEqual(
    errorsOf(
      BASE_FOR_CACHE('{max_object_size: 2MiB, key_headers: ["a b"]}', "  cache: {max_size: 1MiB}"),
    ),
    [
      'tenants[0].applications[0].cache.key_headers[0]: invalid name "a b": must be an HTTP token',
      'tenants[0].applications[0].routes[0].cache.key_headers[0]: invalid name "a b": must be an HTTP token',
    ],
  );
  assert.deepEqual(
    errorsOf(BASE_FOR_CACHE("{max_object_size: 2MiB}", "  cache: {max_size: 1MiB, x: 1}")),
    ['server.cache: unknown key "x"'],
  );
  assert.deepEqual(
    errorsOf(BASE_FOR_CACHE("{max_object_size: 2MiB}", "  cache: {max_size: 1MiB}")),
    [
      "tenants[0].applications[0].cache.max_object_size: must be at most server.cache.max_size (1048576 bytes)",
      "tenants[0].applications[0].routes[0].cache.max_object_size: must be at most server.cache.max_size (1048576 bytes)",
    ],
  );
});

Deno.test("cache: server.cache.path and disk_max_size (1 GiB when path is set)", () => {
  const of = (server: string) => parseConfig(BASE_FOR_CACHE("{}", server), "p.yaml").config;
  const none = of("").server.cache;
  assert.equal(none.path, undefined);
  assert.equal(none.disk_max_size, undefined);
  const on = of("  cache: {path: /var/cache/scalwsd}").server.cache;
  assert.equal(on.path, "/var/cache/scalwsd");
  assert.equal(on.disk_max_size, 1024 * 1024 * 1024);
  const sized = of("  cache: {path: /c, disk_max_size: 20GiB, max_size: 1MiB}").server.cache;
  assert.equal(sized.disk_max_size, 20 * 1024 * 1024 * 1024);
  // An object may be larger than the memory budget when the disk holds it.
  const big = parseConfig(
    BASE_FOR_CACHE("{max_object_size: 2MiB}", "  cache: {path: /c, max_size: 1MiB}"),
    "b.yaml",
  );
  assert.equal(big.config.server.cache.max_size, 1024 * 1024);
});

Deno.test("cache: server.cache.path that names a file is an error; a missing one is made later", () => {
  const stat = (p: string) => {
    if (p === "/srv/cache-file") return { isDirectory: false };
    if (p === "/srv/cache-dir") return { isDirectory: true };
    throw new Deno.errors.NotFound(p);
  };
  const load = (path: string) =>
    parseConfig(BASE_FOR_CACHE("{}", `  cache: {path: ${path}}`), "p.yaml", { stat });
  assert.throws(
    () => load("/srv/cache-file"),
    (e: ConfigError) =>
      e.errors.some((m) => m.includes('server.cache.path: "/srv/cache-file" is not a directory')),
  );
  assert.equal(load("/srv/cache-dir").config.server.cache.path, "/srv/cache-dir");
  assert.equal(load("/srv/not-yet").config.server.cache.path, "/srv/not-yet");
});

Deno.test("cache: the default max_object_size (8 MiB) follows a smaller store; a written one must fit", () => {
  const of = (cache: string, server: string) =>
    parseConfig(BASE_FOR_CACHE(cache, server), "p.yaml").config.tenants[0].applications[0];
  // server.cache of 1 MiB and no max_object_size written: loads, objects up to 1 MiB.
  const small = of("{}", "  cache: {max_size: 1MiB}");
  const c = small.cache as { max_object_size: number };
  assert.equal(c.max_object_size, 1024 * 1024);
  assert.equal((small.routes[0].cache as { max_object_size: number }).max_object_size, 1024 * 1024);
  // A bigger store keeps the 8 MiB default; a disk tier lets it stay 8 MiB over a small memory.
  assert.equal(
    (of("{}", "").cache as { max_object_size: number }).max_object_size,
    8 * 1024 * 1024,
  );
  const disk = of("{}", "  cache: {max_size: 1MiB, path: /tmp/scalwsd-never-made}");
  assert.equal((disk.cache as { max_object_size: number }).max_object_size, 8 * 1024 * 1024);
});
