import assert from "node:assert/strict";
import { adminFetch, request, startMember, startScalwsd } from "./_support/mod.ts";
import { formatSites } from "../cli/ctl_format.ts";

const main = (member: string, include = true) => `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
  admin: {socket: "{{dir}}/admin.sock"}
  ${include ? 'include: ["sites/*.yaml"]' : ""}
upstreams:
  api:
    members: [{address: "${member}"}]
tenants:
  - name: core
    applications:
      - {name: www, domains: [main.test], runtime: {type: respond, body: main}}
`;

const site = (tenant: string, domain: string, body: string) => `
tenants:
  - name: ${tenant}
    applications:
      - name: app
        domains: [${domain}]
        runtime: {type: respond, body: ${body}}
        routes:
          - {path: /api, proxy: {upstream: {pool: api}}}
`;

Deno.test("site files: tenants from server.include, main pools usable, listed by ctl sites", async () => {
  await using m = startMember("pool-member");
  // Started before the site files exist (a glob matching no file is an error), then reloaded.
  await using s = await startScalwsd(main(m.address, false));
  await Deno.mkdir(`${s.dir}/sites`);
  await Deno.writeTextFile(`${s.dir}/sites/a.yaml`, site("acme", "a.test", "site-a"));
  await Deno.writeTextFile(`${s.dir}/sites/b.yaml`, site("beta", "b.test", "site-b"));
  await Deno.writeTextFile(`${s.dir}/sites/notes.txt`, "not a site");
  await s.write(main(m.address));
  assert.equal((await s.server.reload()).ok, true);
  const body = async (host: string, path = "/") =>
    (await request(`${s.url}${path}`, { headers: { host } })).text;
  assert.equal(await body("main.test"), "main");
  assert.equal(await body("a.test"), "site-a");
  assert.equal(await body("b.test"), "site-b");
  assert.equal(await body("b.test", "/api"), "pool-member");

  const sites = await (await adminFetch(s.adminSocket, "/v1/sites")).json();
  assert.deepEqual(sites, {
    sites: [
      { file: s.file, main: true, tenants: ["core"], domains: ["main.test"] },
      { file: `${s.dir}/sites/a.yaml`, main: false, tenants: ["acme"], domains: ["a.test"] },
      { file: `${s.dir}/sites/b.yaml`, main: false, tenants: ["beta"], domains: ["b.test"] },
    ],
  });
  assert.equal(
    formatSites(sites.sites).split("\n")[2].replace(/ +/g, " "),
    `${s.dir}/sites/a.yaml acme a.test`,
  );

  // A bad site file refuses the whole reload: every site keeps serving as before.
  await Deno.writeTextFile(`${s.dir}/sites/b.yaml`, site("beta", "b.test", "changed"));
  await Deno.writeTextFile(
    `${s.dir}/sites/c.yaml`,
    `upstreams: {x: {members: []}}\n${site("gamma", "a.test", "dup")}`,
  );
  const refused = await s.server.reload();
  assert.equal(refused.ok, false);
  const c = `${s.dir}/sites/c.yaml`;
  assert.deepEqual(!refused.ok && refused.errors, [
    `${c}:1:12: upstreams: not allowed in a site file; a site file holds tenants only (pools are defined in the main file)`,
    `${c}:7:19: tenants[0].applications[0].domains[0]: duplicate domain "a.test", first at ${s.dir}/sites/a.yaml: tenants[0].applications[0].domains[0]`,
  ]);
  assert.equal(await body("b.test"), "site-b");
  assert.equal(await body("a.test"), "site-a");
  await Deno.remove(c);
  assert.equal((await s.server.reload()).ok, true);
  assert.equal(await body("b.test"), "changed");
});

Deno.test("site files: errors name the site file and path; main-file domains named with their file", async () => {
  const { parseConfig } = await import("../src/config/load.ts");
  const { ConfigError } = await import("../src/config/errors.ts");
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/sites`);
    await Deno.writeTextFile(
      `${dir}/sites/x.yaml`,
      `server: {}\ntenants:\n  - name: x\n    applications:\n      - {name: a, domains: [main.test], runtime: {type: respond}, proxy: {upstream: {pool: nope}}}\n`,
    );
    await Deno.writeTextFile(`${dir}/sites/y.yaml`, "tenants: [\n");
    try {
      parseConfig(main("127.0.0.1:9"), `${dir}/scalws.yaml`);
      assert.fail("accepted");
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      const x = `${dir}/sites/x.yaml`;
      assert.equal(
        e.errors[0],
        `${x}: server: not allowed in a site file; a site file holds tenants only (server settings are defined in the main file)`,
      );
      assert.equal(
        e.errors[1],
        `${x}: tenants[0].applications[0]: runtime and proxy are mutually exclusive`,
      );
      assert.match(e.errors[2], new RegExp(`^${dir}/sites/y\\.yaml: line \\d+, column \\d+: `));
      assert.equal(
        e.errors[3],
        `${x}: tenants[0].applications[0].domains[0]: duplicate domain "main.test", first at ${dir}/scalws.yaml: tenants[0].applications[0].domains[0]`,
      );
      assert.equal(e.errors.length, 4, e.errors.join("\n"));
      // The message keeps the site file's name in front, not the main file's.
      assert.ok(e.message.split("\n")[0].startsWith(`${x}:1:9: server:`), e.message);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
