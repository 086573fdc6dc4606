import assert from "node:assert/strict";
import { app, get, members, proxy, scalwsYaml, startPki, startScalwsd } from "./_support/mod.ts";

async function tlsMember(
  cert: string,
  key: string,
  name: string,
): Promise<Deno.HttpServer<Deno.NetAddr>> {
  return Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: await Deno.readTextFile(cert),
    key: await Deno.readTextFile(key),
    onListen() {},
  }, (req) => new Response(`${name} ${req.headers.get("host")}`));
}

/** Pool p (`pool` its settings, scheme https) behind application a. */
function config(pool: Record<string, unknown>): string {
  return scalwsYaml({ upstreams: { p: { scheme: "https", ...pool } }, apps: [app(proxy("p"))] });
}

Deno.test("scheme: https verifies members against tls.ca_file under tls.server_name", async () => {
  await using pki = await startPki();
  const { cert, key } = await pki.issue("api", ["api.internal"]);
  const { cert: ipCert, key: ipKey } = await pki.issue("ip", ["127.0.0.1"]);
  await using named = await tlsMember(cert, key, "named");
  await using byIp = await tlsMember(ipCert, ipKey, "ip");
  {
    // The certificate names api.internal: verified under tls.server_name.
    await using s = await startScalwsd(config({
      members: members(`127.0.0.1:${named.addr.port}`),
      tls: { ca_file: pki.caFile, server_name: "api.internal" },
    }));
    const r = await get(s.url + "/", { host: "a.test" });
    assert.equal(r.status, 200);
    assert.equal(r.text, `named 127.0.0.1:${named.addr.port}`);
  }
  {
    // Without server_name the member's IP is the name: the IP certificate verifies...
    await using s = await startScalwsd(config({
      members: members(`127.0.0.1:${byIp.addr.port}`, `127.0.0.1:${named.addr.port}`),
      retries: 0,
      passive_health: { failures: 0 },
      tls: { ca_file: pki.caFile },
    }));
    const statuses = new Map<string, number>();
    for (let i = 0; i < 4; i++) {
      const r = await get(s.url + "/", { host: "a.test" });
      statuses.set(r.status === 200 ? r.text.split(" ")[0] : String(r.status), r.status);
    }
    // ...and the one that names api.internal fails verification: 502, never served.
    assert.deepEqual([...statuses.keys()].sort(), ["502", "ip"]);
  }
  {
    // A CA the member does not chain to: always 502.
    await using other = await startPki();
    await using s = await startScalwsd(config({
      members: members(`127.0.0.1:${named.addr.port}`),
      tls: { ca_file: other.caFile, server_name: "api.internal" },
    }));
    assert.equal((await get(s.url + "/", { host: "a.test" })).status, 502);
  }
});

Deno.test("a reload with an unreadable tls.ca_file is refused and changes nothing", async () => {
  await using pki = await startPki();
  const { cert, key } = await pki.issue("api", ["api.internal"]);
  await using member = await tlsMember(cert, key, "named");
  const yaml = (ca: string) =>
    config({
      members: members(`127.0.0.1:${member.addr.port}`),
      tls: { ca_file: ca, server_name: "api.internal" },
    });
  await using s = await startScalwsd(yaml(pki.caFile));
  assert.equal((await get(s.url + "/", { host: "a.test" })).status, 200);
  await s.write(yaml(`${pki.dir}/missing.pem`));
  const r = await s.server.reload();
  assert.equal(r.ok, false);
  assert.match(r.ok ? "" : r.errors.join("\n"), /upstreams\.p\.tls\.ca_file: cannot read/);
  assert.equal(s.server.generation.id, 1);
  assert.equal((await get(s.url + "/", { host: "a.test" })).status, 200);
});
