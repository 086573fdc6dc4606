/**
 * `scalwsd check` as an operator reads it: every error at `FILE:LINE:COLUMN: PATH: MESSAGE`
 * (site files naming their own file), suggestions for misspelt keys, examples for durations,
 * and relative paths taken from the directory of the file that names them, whatever the working
 * directory.
 */
import assert from "node:assert/strict";
import { tempDir } from "./_support/mod.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

async function check(file: string, cwd = "/"): Promise<{ code: number; out: string; err: string }> {
  const o = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, "check", "--config", file],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b).trimEnd();
  return { code: o.code, out: text(o.stdout), err: text(o.stderr) };
}

Deno.test("scalwsd check names the file, line and column of every mistake, with suggestions and examples", async () => {
  await using dir = await tempDir("scalwsd-lines-");
  const d = dir.path;
  await Deno.mkdir(`${d}/sites/www`, { recursive: true });
  await Deno.writeTextFile(
    `${d}/main.yaml`,
    `server:
  listeners: [{name: http, address: "127.0.0.1:8080"}]
  include: ["sites/*.yaml", "nothing/*.yaml"]
upstreams:
  api:
    balanse: round_robin
    members: [{address: "127.0.0.1:9000"}]
    sticky: {ttl: 10 seconds}
tenants:
  - name: t
    applications:
      - name: a
        domains: [a.test]
        runtime: {type: static, root: missing-dir}
`,
  );
  await Deno.writeTextFile(
    `${d}/sites/s.yaml`,
    `tenants:
  - name: s
    applications:
      - name: b
        domains: [b.test]
        runtime: {type: static, root: www}
        max_bdy: 10
`,
  );
  const r = await check(`${d}/main.yaml`);
  assert.equal(r.code, 1);
  assert.equal(r.out, "");
  assert.deepEqual(r.err.split("\n"), [
    `${d}/main.yaml:8:19: upstreams.api.sticky.ttl: invalid duration "10 seconds": ` +
    "write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m",
    `${d}/main.yaml:6:5: upstreams.api: unknown key "balanse"; did you mean "balance"?`,
    `${d}/sites/s.yaml:7:9: tenants[0].applications[0]: unknown key "max_bdy"; did you mean "max_body"?`,
    `${d}/main.yaml:3:29: server.include[1]: "nothing/*.yaml" matches no file (looked in ${d})`,
    `${d}/main.yaml:14:39: tenants[0].applications[0].runtime.root: directory "${d}/missing-dir" does not exist`,
  ]);
});

Deno.test("relative paths resolve against the directory of the file that names them", async () => {
  await using dir = await tempDir("scalwsd-paths-");
  const d = dir.path;
  await Deno.mkdir(`${d}/conf/sites/www`, { recursive: true });
  await Deno.mkdir(`${d}/conf/public`, { recursive: true });
  await Deno.writeTextFile(
    `${d}/conf/main.yaml`,
    `server:
  listeners: [{name: http, address: "127.0.0.1:8080"}]
  include: [sites/*.yaml]
tenants:
  - name: t
    applications:
      - {name: a, domains: [a.test], runtime: {type: static, root: public}}
`,
  );
  await Deno.writeTextFile(
    `${d}/conf/sites/s.yaml`,
    `tenants:
  - name: s
    applications:
      - name: b
        domains: [b.test]
        runtime: {type: static, root: www}
`,
  );
  // From another working directory: "public" is conf/public, "www" is conf/sites/www.
  const ok = await check("conf/main.yaml", d);
  assert.deepEqual([ok.code, ok.out, ok.err], [0, "ok", ""]);
  const elsewhere = await check(`${d}/conf/main.yaml`, "/");
  assert.deepEqual([elsewhere.code, elsewhere.out], [0, "ok"]);
  // The same names from the site file's point of view do not exist: the error shows the path,
  // resolved and normalized ("./public" is "<dir>/public", not "<dir>/./public").
  await Deno.writeTextFile(
    `${d}/conf/sites/s.yaml`,
    "tenants:\n  - name: s\n    applications:\n" +
      "      - {name: b, domains: [b.test], runtime: {type: static, root: ./public}}\n",
  );
  const wrong = await check(`${d}/conf/main.yaml`);
  assert.equal(wrong.code, 1);
  assert.equal(
    wrong.err,
    `${d}/conf/sites/s.yaml:4:68: tenants[0].applications[0].runtime.root: ` +
      `directory "${d}/conf/sites/public" does not exist`,
  );
});
