import assert from "node:assert/strict";
import {
  check,
  findImports,
  format,
  hasModuleDoc,
  LAYERS,
  resolve,
  roomOf,
} from "./check_layers.ts";

const ORDER = [["base"], ["net"], ["server"], ["admin"]];

Deno.test("findImports finds import, export, type and dynamic forms with their lines", () => {
  const text = [
    'import { a } from "./a.ts";',
    "import type {",
    "  B,",
    '} from "../net/b.ts";',
    '// import { c } from "../c.ts";',
    'export { d } from "./d.ts";',
    'const e = await import("./e.ts");',
    'import assert from "node:assert/strict";',
  ].join("\n");
  assert.deepEqual(
    findImports("src/base/x.ts", text).map((i) => `${i.line} ${i.specifier}`),
    ["1 ./a.ts", "4 ../net/b.ts", "6 ./d.ts", "7 ./e.ts"],
  );
});

Deno.test("roomOf and resolve name the room of a path", () => {
  assert.equal(resolve("src/http1/conn_pool.ts", "../base/clock.ts"), "src/base/clock.ts");
  assert.equal(resolve("admin/app.ts", "../src/server/server.ts"), "src/server/server.ts");
  assert.equal(roomOf("src/upstream/balance/hash.ts"), "upstream");
  assert.equal(roomOf("admin/app.ts"), "admin");
  assert.equal(roomOf("main.ts"), "main");
  assert.equal(roomOf("tests/pool_test.ts"), undefined);
});

Deno.test("check passes imports that run down the order and counts the edges", () => {
  const files = new Map([
    ["src/base/clock.ts", "export const c = 1;"],
    ["src/net/ip.ts", 'import { c } from "../base/clock.ts";'],
    ["src/server/s.ts", 'import { c } from "../base/clock.ts";\nimport "../net/ip.ts";'],
    ["admin/app.ts", 'import type { S } from "../src/server/s.ts";\nimport "./views.ts";'],
  ]);
  const r = check(files, ORDER);
  assert.deepEqual(r.violations, []);
  assert.deepEqual(r.cycles, []);
  assert.deepEqual([...r.edges].sort(), [
    ["admin -> server", 1],
    ["net -> base", 1],
    ["server -> base", 1],
    ["server -> net", 1],
  ]);
  assert.match(format(r), /layers: ok/);
});

Deno.test("check fails on a wrong-way import and on the folder cycle it closes", () => {
  const files = new Map([
    ["src/base/plain.ts", "export const p = 1;"],
    [
      "src/server/listeners.ts",
      'import { p } from "../base/plain.ts";\nimport "../admin/app.ts";',
    ],
    ["admin/app.ts", 'import type { S } from "../src/server/listeners.ts";'],
  ]);
  const r = check(files, ORDER);
  assert.deepEqual(r.cycles, [["admin", "server", "admin"]]);
  assert.deepEqual(r.violations.map((v) => `${v.file}:${v.line}: ${v.message}`), [
    'src/server/listeners.ts:2: server imports admin ("../admin/app.ts"): admin is a higher layer',
    "admin/app.ts:1: folder cycle admin -> server -> admin",
  ]);
  assert.match(format(r), /layers: 2 problem\(s\)/);
});

Deno.test("check fails on imports between rooms of one layer and on rooms not in the order", () => {
  const files = new Map([
    ["src/http1/a.ts", 'import "../fastcgi/b.ts";'],
    ["src/fastcgi/b.ts", ""],
    ["src/attic/c.ts", ""],
  ]);
  const r = check(files, [["http1", "fastcgi"]]);
  assert.deepEqual(r.violations.map((v) => v.message), [
    'room "attic" is not in the layer order',
    'http1 imports fastcgi ("../fastcgi/b.ts"): rooms of one layer do not import each other',
  ]);
});

Deno.test("check fails on a file cycle inside a room, type-only imports included", () => {
  const files = new Map([
    ["src/upstream/pool.ts", 'import { R } from "./pool_request.ts";'],
    ["src/upstream/pool_request.ts", 'import type { S } from "./pool.ts";'],
    ["src/upstream/ring_a.ts", 'import "./ring_b.ts";'],
    ["src/upstream/ring_b.ts", 'import "./balance/ring_c.ts";'],
    ["src/upstream/balance/ring_c.ts", 'export * from "../ring_a.ts";'],
    ["src/upstream/member.ts", 'import "./pool.ts";'],
  ]);
  const r = check(files, [["upstream"]]);
  assert.deepEqual(r.cycles, []);
  assert.deepEqual(r.fileCycles, [
    [
      "src/upstream/balance/ring_c.ts",
      "src/upstream/ring_a.ts",
      "src/upstream/ring_b.ts",
      "src/upstream/balance/ring_c.ts",
    ],
    ["src/upstream/pool.ts", "src/upstream/pool_request.ts", "src/upstream/pool.ts"],
  ]);
  assert.deepEqual(r.violations.map((v) => `${v.file}:${v.line}: ${v.message}`), [
    "src/upstream/balance/ring_c.ts:1: file cycle src/upstream/balance/ring_c.ts -> " +
    "src/upstream/ring_a.ts -> src/upstream/ring_b.ts -> src/upstream/balance/ring_c.ts",
    "src/upstream/pool.ts:1: file cycle src/upstream/pool.ts -> src/upstream/pool_request.ts " +
    "-> src/upstream/pool.ts",
  ]);
  assert.match(format(r), /layers: 2 problem\(s\)/);
});

Deno.test("LAYERS places every room of DESIGN.md once", () => {
  const rooms = LAYERS.flat();
  assert.equal(new Set(rooms).size, rooms.length);
  for (
    const r of ["base", "net", "config", "http1", "fastcgi", "upstream", "discovery", "front"]
      .concat(["pipeline", "cache", "handlers", "apps", "server", "observe", "controller"])
      .concat(["admin", "cli", "main", "acme"])
  ) assert.ok(rooms.includes(r), r);
});

Deno.test("check refuses an import from another room that does not go through its mod.ts", () => {
  const files = new Map([
    ["src/base/mod.ts", 'export { c } from "./clock.ts";'],
    ["src/base/clock.ts", "export const c = 1;"],
    ["src/base/_gen.ts", "export const g = 1;"],
    [
      "src/net/ip.ts",
      'import { c } from "../base/mod.ts";\nimport { c as d } from "../base/clock.ts";',
    ],
    ["src/net/ip_test.ts", 'import { c } from "../base/clock.ts";'],
    ["src/net/_fuzz.ts", 'import { g } from "../base/_gen.ts";'],
    ["src/net/fuzz_test.ts", 'import "./_fuzz.ts";'],
    ["src/net/_private.ts", 'import { g } from "../base/_gen.ts";'],
    ["src/net/route.ts", 'import "./_private.ts";'],
    ["src/server/s.ts", 'import "../net/ip.ts";'],
    ["admin/app.ts", 'import "../src/server/s.ts";'],
    ["cli/run.ts", 'import "../admin/mod.ts";\nimport "../admin/app.ts";'],
  ]);
  const order = [["base"], ["net"], ["server"], ["admin"], ["cli"]];
  assert.deepEqual(
    check(files, order, { faces: true }).violations.map((v) => `${v.file}:${v.line}: ${v.message}`),
    [
      "admin/app.ts:1: admin imports src/server/s.ts: other rooms enter server through " +
      "src/server/mod.ts",
      "cli/run.ts:2: cli imports admin/app.ts: other rooms enter admin through admin/mod.ts",
      "src/net/_private.ts:1: net imports src/base/_gen.ts: other rooms enter base through " +
      "src/base/mod.ts",
      "src/net/ip.ts:2: net imports src/base/clock.ts: other rooms enter base through " +
      "src/base/mod.ts",
      "src/server/s.ts:1: server imports src/net/ip.ts: other rooms enter net through " +
      "src/net/mod.ts",
    ],
  );
  // A room still being faced may be entered directly.
  assert.deepEqual(
    check(files, order, { faces: true, unfaced: new Set(["server", "admin", "net"]) }).violations
      .map((v) => v.file),
    ["src/net/_private.ts", "src/net/ip.ts"],
  );
});

Deno.test("check refuses a module that does not open with a doc comment, tests excepted", () => {
  const files = new Map([
    ["src/base/clock.ts", "/** The clock every room reads. */\nexport const c = 1;"],
    ["src/base/lock.ts", 'import "./clock.ts";\n/** A lock. */\nexport class Lock {}'],
    ["src/base/empty.ts", "/** */\nexport const e = 1;"],
    ["src/base/lock_test.ts", 'import "./lock.ts";'],
    ["src/base/_gen.ts", "export const g = 1;"],
    ["src/base/gen_test.ts", 'import "./_gen.ts";'],
    ["main.ts", '// main\nimport "./src/base/clock.ts";'],
  ]);
  const order = [["base"], ["main"]];
  assert.deepEqual(check(files, order).violations, []);
  assert.deepEqual(
    check(files, order, { docs: true }).violations.map((v) => `${v.file}:${v.line}`),
    [
      "main.ts:1",
      "src/base/empty.ts:1",
      "src/base/lock.ts:1",
    ],
  );
  assert.ok(hasModuleDoc("/**\n * What it is for.\n *\n * @module\n */\n"));
  assert.ok(!hasModuleDoc('// What it is for.\nimport "./a.ts";'));
});

Deno.test("docs/architecture.md draws LAYERS and lists every room of src/", () => {
  const doc = Deno.readTextFileSync(new URL("../docs/architecture.md", import.meta.url));
  const graph = /Rooms import one way[^\n]*\n+```\n([^`]*)```/.exec(doc);
  assert.ok(graph, "no layer graph in docs/architecture.md");
  const drawn = graph[1].split("<-").map((step) =>
    step.split(",").map((r) => r.trim().replace(/\.ts$/, ""))
  );
  assert.deepEqual(drawn, LAYERS.map((l) => [...l]));
  const src = new URL("../src/", import.meta.url);
  for (const e of Deno.readDirSync(src)) {
    if (e.isDirectory) {
      assert.ok(doc.includes(`- \`src/${e.name}/\`: `), `src/${e.name}/ not listed`);
    }
  }
});
