/**
 * Broken configuration files through `scalwsd check` (its `checkFile`, and the command once): the exact path and message of every error
 * (cases not in src/config/load_test.ts).
 */
import assert from "node:assert/strict";
import { checkFile } from "../cli/check.ts";
import { tempDir } from "./_support/mod.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

const LISTENER = 'server:\n  listeners: [{name: http, address: "127.0.0.1:8080"}]\n';
const POOL = (extra = "", address = "127.0.0.1:80") =>
  `upstreams:\n  api: {members: [{address: "${address}"}]${extra}}\n`;
const APP = (runtime = "{type: proxy, upstream: {pool: api}}", extra = "") =>
  "tenants:\n  - name: t\n    applications:\n" +
  `      - {name: a, domains: [a.test], runtime: ${runtime}${extra}}\n`;
const A = "tenants[0].applications[0]";

/** Each file and the exact, complete list of errors `check` prints for it (after `FILE:L:C: `). */
const BROKEN_CONFIGS: { name: string; yaml: string; errors: string[] }[] = [
  {
    name: "a tab in the indentation",
    yaml: LISTENER + "upstreams:\n\tapi: {}\n",
    errors: ["Tabs are not allowed as indentation"],
  },
  {
    name: "member port 0",
    yaml: LISTENER + POOL("", "127.0.0.1:0") + APP(),
    errors: [
      'upstreams.api.members[0].address: invalid address "127.0.0.1:0": port must be between 1 and 65535',
    ],
  },
  {
    name: "IPv6 member without brackets",
    yaml: LISTENER + POOL("", "::1:8080") + APP(),
    errors: [
      'upstreams.api.members[0].address: invalid address "::1:8080": an IPv6 address must be in brackets',
    ],
  },
  {
    name: "relative unix member",
    yaml: LISTENER + POOL("", "unix:run/api.sock") + APP(),
    errors: [
      'upstreams.api.members[0].address: invalid address "unix:run/api.sock": the socket path must be absolute',
    ],
  },
  {
    name: "weight as a string",
    yaml: LISTENER + 'upstreams:\n  api: {members: [{address: "127.0.0.1:80", weight: "2"}]}\n' +
      APP(),
    errors: ["upstreams.api.members[0].weight: must be an integer"],
  },
  {
    name: "members as a mapping",
    yaml: LISTENER + 'upstreams:\n  api: {members: {a: "127.0.0.1:80"}}\n' + APP(),
    errors: ["upstreams.api.members: must be a list"],
  },
  {
    name: "hash by an unknown kind",
    yaml: LISTENER + POOL(", balance: hash, hash: {by: query}") + APP(),
    errors: [
      'upstreams.api.hash.by: invalid value "query"; must be one of cookie, header, client_ip',
    ],
  },
  {
    name: "a unit used twice in a duration",
    yaml: LISTENER + POOL(", passive_health: {cooldown: 1s1s}") + APP(),
    errors: [
      'upstreams.api.passive_health.cooldown: invalid duration "1s1s": units must go from largest to smallest, each once',
    ],
  },
  {
    name: "a fractional size",
    yaml: LISTENER + "  max_body: 1.5MiB\n" + POOL() + APP(),
    errors: [
      'server.max_body: invalid size "1.5MiB": use bytes or a unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, like 512, 64KiB or 10MiB',
    ],
  },
  {
    name: "trusted_proxies not a list",
    yaml: LISTENER + "  trusted_proxies: 10.0.0.0/8\n" + POOL() + APP(),
    errors: ["server.trusted_proxies: must be a list"],
  },
  {
    name: "a listener name in capitals",
    yaml: 'server:\n  listeners: [{name: HTTP, address: "127.0.0.1:8080"}]\n' + POOL() + APP(),
    errors: [
      'server.listeners[0].name: invalid name "HTTP": use 1 to 63 characters a-z, 0-9, "_" and "-", starting with a letter or digit',
    ],
  },
  {
    name: "a domain with a port",
    yaml: LISTENER + POOL() + APP().replace("[a.test]", '["a.test:8080"]'),
    errors: [`${A}.domains[0]: invalid domain "a.test:8080"`],
  },
  {
    name: "a route path with a query",
    yaml: LISTENER + POOL() +
      APP(undefined, ', routes: [{path: "/a?b", runtime: {type: respond}}]'),
    errors: [`${A}.routes[0].path: invalid path "/a?b": no spaces, "?" or "#" allowed`],
  },
  {
    name: "a respond status as a string",
    yaml: LISTENER + POOL() + APP('{type: respond, status: "200"}'),
    errors: [`${A}.runtime.status: must be an integer`],
  },
  {
    name: "a relative unix upstream",
    yaml: LISTENER + POOL() + APP('{type: proxy, upstream: "unix:run/app.sock"}'),
    errors: [
      `${A}.runtime.upstream: invalid upstream "unix:run/app.sock": the socket path must be absolute`,
    ],
  },
];

/** `FILE: MESSAGE` of each `FILE:LINE:COLUMN: MESSAGE` line, asserting the place is there. */
function unplaced(file: string, lines: readonly string[]): string[] {
  return lines.map((line) => {
    // Every line is FILE:LINE:COLUMN: ...; the places are asserted in config_lines_test.ts.
    assert.ok(line.startsWith(`${file}:`) && /^\d+:\d+: /.test(line.slice(file.length + 1)), line);
    return `${file}: ${line.slice(file.length + 1).replace(/^\d+:\d+: /, "")}`;
  });
}

Deno.test("check finds the exact path and message for each broken configuration", async () => {
  await using dir = await tempDir("scalwsd-check-");
  const failures: string[] = [];
  for (const c of BROKEN_CONFIGS) {
    const file = `${dir.path}/${c.name.replaceAll(/\W+/g, "_")}.yaml`;
    await Deno.writeTextFile(file, c.yaml);
    try {
      const { errors } = await checkFile(file);
      assert.deepEqual(unplaced(file, errors), c.errors.map((e) => `${file}: ${e}`), c.name);
    } catch (err) {
      failures.push(String(err));
    }
  }
  assert.deepEqual(failures, []);
});

Deno.test("scalwsd check prints them on stderr, nothing on stdout, and exits 1", async () => {
  await using dir = await tempDir("scalwsd-check-");
  // The command itself, once: the same lines checkFile gives, as a user sees them.
  const c = BROKEN_CONFIGS.find((b) => b.name === "member port 0")!;
  const file = `${dir.path}/broken.yaml`;
  await Deno.writeTextFile(file, c.yaml);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, "check", "--config", file],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 1);
  assert.equal(out.stdout.length, 0);
  const stderr = new TextDecoder().decode(out.stderr).trimEnd().split("\n");
  assert.deepEqual(unplaced(file, stderr), c.errors.map((e) => `${file}: ${e}`));
});
