/** The `php` and supervised application runtimes, and pools with `protocol: fastcgi`. */
import assert from "node:assert/strict";
import { ConfigError } from "./errors.ts";
import { configFromData } from "./load.ts";
import { EVERY_DIR } from "./_load_test_doc.ts";

const SERVER = { listeners: [{ name: "http", address: "127.0.0.1:80" }] };

function load(runtime: unknown, upstreams?: unknown) {
  return configFromData(
    {
      server: SERVER,
      ...(upstreams !== undefined ? { upstreams } : {}),
      tenants: [{ name: "t", applications: [{ name: "a", domains: ["a.test"], runtime }] }],
    },
    "test.yaml",
    [],
    EVERY_DIR,
  ).config.tenants[0].applications[0].runtime;
}

function errors(runtime: unknown, upstreams?: unknown): string[] {
  try {
    load(runtime, upstreams);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.errors];
    throw err;
  }
  return [];
}

Deno.test("php runtime: defaults", () => {
  assert.deepEqual(load({ type: "php", root: "/srv/www" }), {
    type: "php",
    fastcgi: {
      kind: "address",
      address: {
        kind: "unix",
        path: "/run/php/php-fpm.sock",
        canonical: "unix:/run/php/php-fpm.sock",
      },
      max_conns: 0,
      max_queue: 256,
    },
    root: "/srv/www",
    index: "index.php",
    follow_symlinks: "inside_root",
    allowed_roots: [],
    params: {},
    connect_timeout: 5_000,
    response_timeout: 60_000,
  });
});

Deno.test("php runtime: every key, a TCP address", () => {
  const rt = load({
    type: "php",
    fastcgi: "127.0.0.1:9000",
    root: "/srv",
    index: "app.php",
    front_controller: "/index.php",
    params: { APP_ENV: "prod" },
    connect_timeout: "1s",
    response_timeout: "2s",
    status_path: "/fpm-status",
  });
  assert.equal(rt.type, "php");
  if (rt.type !== "php") return;
  assert.deepEqual(rt.fastcgi, {
    kind: "address",
    address: { kind: "tcp", hostname: "127.0.0.1", port: 9000, canonical: "127.0.0.1:9000" },
    max_conns: 0,
    max_queue: 256,
  });
  assert.equal(rt.front_controller, "/index.php");
  assert.equal(rt.response_timeout, 2000);
  assert.equal(rt.status_path, "/fpm-status");
});

Deno.test("php runtime: fastcgi {address, max_conns, max_queue} bounds one address", () => {
  const rt = load({
    type: "php",
    root: "/srv",
    fastcgi: { address: "unix:/run/php/a.sock", max_conns: 4, max_queue: 10 },
  });
  assert.equal(rt.type, "php");
  if (rt.type !== "php") return;
  assert.deepEqual(rt.fastcgi, {
    kind: "address",
    address: { kind: "unix", path: "/run/php/a.sock", canonical: "unix:/run/php/a.sock" },
    max_conns: 4,
    max_queue: 10,
  });
  const only = load({ type: "php", root: "/srv", fastcgi: { address: "127.0.0.1:9000" } });
  assert.equal(only.type === "php" && only.fastcgi.kind === "address" && only.fastcgi.max_conns, 0);
  assert.deepEqual(
    errors({ type: "php", root: "/x", fastcgi: { address: "127.0.0.1:9000", max_conns: 0 } }),
    ["tenants[0].applications[0].runtime.fastcgi.max_conns: must be between 1 and 10000"],
  );
});

Deno.test("php runtime: errors name their path", () => {
  assert.deepEqual(errors({ type: "php" }), [
    "tenants[0].applications[0].runtime.root: is required",
  ]);
  assert.deepEqual(
    errors({ type: "php", root: "/x", fastcgi: "http://x:1", extra: 1 }),
    [
      'tenants[0].applications[0].runtime: unknown key "extra"',
      'tenants[0].applications[0].runtime.fastcgi: invalid address "http://x:1": a member address has no scheme, write "x:1"',
    ].sort(),
  );
});

Deno.test("php runtime: a pool must speak FastCGI, and a FastCGI pool is not proxied to", () => {
  const http = { web: { members: [{ address: "127.0.0.1:9000" }] } };
  assert.deepEqual(errors({ type: "php", root: "/x", fastcgi: { pool: "web" } }, http), [
    'tenants[0].applications[0].runtime.fastcgi.pool: pool "web" must have protocol: fastcgi',
  ]);
  const fcgi = { fpm: { protocol: "fastcgi", members: [{ address: "127.0.0.1:9000" }] } };
  assert.deepEqual(errors({ type: "proxy", upstream: { pool: "fpm" } }, fcgi), [
    'tenants[0].applications[0].runtime.upstream.pool: pool "fpm" speaks FastCGI; use it from type: php',
  ]);
  const rt = load({ type: "php", root: "/x", fastcgi: { pool: "fpm" } }, fcgi);
  assert.deepEqual(rt.type === "php" && rt.fastcgi, { kind: "pool", pool: "fpm" });
  assert.deepEqual(
    errors({ type: "respond" }, {
      fpm: { protocol: "fastcgi", scheme: "https", health_check: { path: "/x" } },
    }).filter((e) => !e.includes("no members")),
    [
      "upstreams.fpm.scheme: not allowed with protocol: fastcgi",
      "upstreams.fpm.health_check.path: not allowed with protocol: fastcgi (checks connect only)",
    ],
  );
});

Deno.test("app runtimes: presets fill command and PORT, defaults", () => {
  const node = load({ type: "node", entry: "server.js", workers: 2, cwd: "/srv/app" });
  assert.deepEqual(node, {
    type: "app",
    preset: "node",
    command: ["node", "server.js"],
    workers: 2,
    cwd: "/srv/app",
    env: { PORT: "{socket}" },
    listen: "socket",
    max_restarts: 5,
    restart_window: 60_000,
    drain_timeout: 30_000,
    ready_timeout: 30_000,
    connect_timeout: 5_000,
    response_timeout: 60_000,
    retries: 1,
    websocket: true,
  });
  const uv = load({ type: "python", app: "main:app" });
  assert.deepEqual(uv.type === "app" && uv.command.slice(1), [
    "-m",
    "uvicorn",
    "--uds",
    "{socket}",
    "main:app",
  ]);
  const gu = load({ type: "python", app: "wsgi:application", server: "gunicorn" });
  assert.ok(gu.type === "app" && gu.command.includes("unix:{socket}"));
  const dflt = load({ type: "node" });
  assert.deepEqual(dflt.type === "app" && dflt.command, ["node", "server.js"]);
  const dn = load({ type: "deno" });
  assert.deepEqual(dn.type === "app" && dn.command.slice(1), ["run", "--allow-all", "main.ts"]);
  const port = load({ type: "app", command: ["./srv", "--port", "{port}"], env: { A: "b" } });
  assert.ok(port.type === "app" && port.listen === "port");
});

Deno.test("app runtimes: a command must be told where to listen", () => {
  assert.deepEqual(errors({ type: "app", command: ["./srv"] }), [
    "tenants[0].applications[0].runtime.command: must pass {socket} or {port} to the application (in command or env)",
  ]);
  assert.deepEqual(errors({ type: "app", command: ["./srv", "{socket}", "{port}"] }), [
    "tenants[0].applications[0].runtime: use {socket} or {port}, not both",
  ]);
  assert.deepEqual(errors({ type: "python", app: "nocolon" }), [
    'tenants[0].applications[0].runtime.app: invalid app "nocolon": use "module:attribute"',
  ]);
  assert.deepEqual(errors({ type: "node", entry: "s.js", workers: 0 }), [
    "tenants[0].applications[0].runtime.workers: must be between 1 and 256",
  ]);
});

Deno.test("static and php runtimes: follow_symlinks and allowed_roots", () => {
  for (const type of ["static", "php"]) {
    const rt = load({
      type,
      root: "/usr/share/wordpress",
      follow_symlinks: "owner_match",
      allowed_roots: ["/usr/share/javascript", "/usr/share/php"],
    });
    assert.ok(rt.type === "static" || rt.type === "php");
    if (rt.type !== "static" && rt.type !== "php") return;
    assert.equal(rt.follow_symlinks, "owner_match");
    assert.deepEqual(rt.allowed_roots, ["/usr/share/javascript", "/usr/share/php"]);
    assert.equal(
      (load({ type, root: "/srv", follow_symlinks: "always" }) as typeof rt)
        .follow_symlinks,
      "always",
    );
  }
  assert.deepEqual(errors({ type: "static", root: "/x", follow_symlinks: "yes" }), [
    'tenants[0].applications[0].runtime.follow_symlinks: invalid value "yes"; must be one of ' +
    "inside_root, owner_match, always",
  ]);
  assert.deepEqual(errors({ type: "php", root: "/x", allowed_roots: ["usr/share"] }), [
    'tenants[0].applications[0].runtime.allowed_roots[0]: invalid path "usr/share": must be absolute',
  ]);
});

Deno.test("app runtimes: a node or deno entry missing from cwd is an error naming it", () => {
  const there = new Set(["/srv/app", "/srv/app/server.js", "/srv/app/main.ts"]);
  const stat = (path: string) => {
    if (!there.has(path)) throw new Deno.errors.NotFound(path);
    return { isDirectory: !path.includes(".") };
  };
  const errs = (runtime: unknown) => {
    try {
      configFromData(
        {
          server: SERVER,
          tenants: [{ name: "t", applications: [{ name: "a", domains: ["a.test"], runtime }] }],
        },
        "test.yaml",
        [],
        { stat },
      );
    } catch (err) {
      if (err instanceof ConfigError) return [...err.errors];
      throw err;
    }
    return [];
  };
  assert.deepEqual(errs({ type: "node", cwd: "/srv/app" }), []);
  assert.deepEqual(errs({ type: "deno", cwd: "/srv/app" }), []);
  assert.deepEqual(errs({ type: "deno", cwd: "/srv/app", entry: "npm:srv" }), []);
  assert.deepEqual(errs({ type: "node", cwd: "/srv/app", entry: "dist/server.js" }), [
    'tenants[0].applications[0].runtime.entry: file "dist/server.js" does not exist in "/srv/app"',
  ]);
  assert.deepEqual(errs({ type: "deno", cwd: "/srv/app", entry: "/srv/other.ts" }), [
    'tenants[0].applications[0].runtime.entry: file "/srv/other.ts" does not exist in "/srv/app"',
  ]);
  assert.deepEqual(errs({ type: "node", cwd: "/srv/none" }), [
    'tenants[0].applications[0].runtime.cwd: directory "/srv/none" does not exist',
  ]);
});

Deno.test("respond runtime: a 1xx status is refused (an interim answer is never a final one)", () => {
  assert.deepEqual(errors({ type: "respond", status: 101 }), [
    "tenants[0].applications[0].runtime.status: 101 is an interim (1xx) status; a respond answer needs 200..599",
  ]);
  assert.deepEqual(errors({ type: "respond", status: 100 }).length, 1);
  assert.deepEqual(errors({ type: "respond", status: 99 }), [
    "tenants[0].applications[0].runtime.status: must be between 100 and 599",
  ]);
  assert.equal(load({ type: "respond", status: 204 }).type, "respond");
});
