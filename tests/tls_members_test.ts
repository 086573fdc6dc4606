import assert from "node:assert/strict";
import { makePki } from "../src/base/_test_certs.ts";
import { get, startScalwsd } from "./_harness.ts";

async function tlsMember(
  cert: string,
  key: string,
  name: string,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: await Deno.readTextFile(cert),
    key: await Deno.readTextFile(key),
    onListen() {},
  }, (req) => new Response(`${name} ${req.headers.get("host")}`));
  return { port: server.addr.port, close: () => server.shutdown() };
}

Deno.test("scheme: https verifies members against tls.ca_file under tls.server_name", async () => {
  const pki = await makePki();
  const { cert, key } = await pki.issue("api", ["api.internal"]);
  const { cert: ipCert, key: ipKey } = await pki.issue("ip", ["127.0.0.1"]);
  const named = await tlsMember(cert, key, "named");
  const byIp = await tlsMember(ipCert, ipKey, "ip");
  const yaml = (pool: string) => `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
  admin: {socket: "{{dir}}/admin.sock"}
upstreams:
${pool}
tenants:
  - name: t
    applications:
      - {name: a, domains: [a.test], runtime: {type: proxy, upstream: {pool: p}}}
`;
  try {
    // The certificate names api.internal: verified under tls.server_name.
    let s = await startScalwsd(yaml(`
  p:
    scheme: https
    members: [{address: "127.0.0.1:${named.port}"}]
    tls: {ca_file: "${pki.caFile}", server_name: api.internal}
`));
    try {
      const r = await get(s.url + "/", { host: "a.test" });
      assert.equal(r.status, 200);
      assert.equal(r.text, `named 127.0.0.1:${named.port}`);
    } finally {
      await s.close();
    }

    // Without server_name the member's IP is the name: the IP certificate verifies...
    s = await startScalwsd(yaml(`
  p:
    scheme: https
    members: [{address: "127.0.0.1:${byIp.port}"}, {address: "127.0.0.1:${named.port}"}]
    retries: 0
    passive_health: {failures: 0}
    tls: {ca_file: "${pki.caFile}"}
`));
    try {
      const statuses = new Map<string, number>();
      for (let i = 0; i < 4; i++) {
        const r = await get(s.url + "/", { host: "a.test" });
        statuses.set(r.status === 200 ? r.text.split(" ")[0] : String(r.status), r.status);
      }
      // ...and the one that names api.internal fails verification: 502, never served.
      assert.deepEqual([...statuses.keys()].sort(), ["502", "ip"]);
    } finally {
      await s.close();
    }

    // A CA the member does not chain to: always 502.
    const other = await makePki();
    s = await startScalwsd(yaml(`
  p:
    scheme: https
    members: [{address: "127.0.0.1:${named.port}"}]
    tls: {ca_file: "${other.caFile}", server_name: api.internal}
`));
    try {
      assert.equal((await get(s.url + "/", { host: "a.test" })).status, 502);
    } finally {
      await s.close();
      await other.close();
    }
  } finally {
    await named.close();
    await byIp.close();
    await pki.close();
  }
});

Deno.test("a reload with an unreadable tls.ca_file is refused and changes nothing", async () => {
  const pki = await makePki();
  const { cert, key } = await pki.issue("api", ["api.internal"]);
  const member = await tlsMember(cert, key, "named");
  const yaml = (ca: string) => `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
  admin: {socket: "{{dir}}/admin.sock"}
upstreams:
  p:
    scheme: https
    members: [{address: "127.0.0.1:${member.port}"}]
    tls: {ca_file: "${ca}", server_name: api.internal}
tenants:
  - name: t
    applications:
      - {name: a, domains: [a.test], runtime: {type: proxy, upstream: {pool: p}}}
`;
  const s = await startScalwsd(yaml(pki.caFile));
  try {
    assert.equal((await get(s.url + "/", { host: "a.test" })).status, 200);
    await s.write(yaml(`${pki.dir}/missing.pem`));
    const r = await s.server.reload();
    assert.equal(r.ok, false);
    assert.match(r.ok ? "" : r.errors.join("\n"), /upstreams\.p\.tls\.ca_file: cannot read/);
    assert.equal(s.server.generation.id, 1);
    assert.equal((await get(s.url + "/", { host: "a.test" })).status, 200);
  } finally {
    await s.close();
    await member.close();
    await pki.close();
  }
});
