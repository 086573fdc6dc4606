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

Deno.test("a pool reads tls.ca_file when it is built: a reload or a new member list keeps it, a changed setting reads it again", async () => {
  await using one = await startPki();
  await using two = await startPki();
  const a = await one.issue("api", ["api.internal"]);
  const b = await two.issue("api", ["api.internal"]);
  await using memberA = await tlsMember(a.cert, a.key, "a");
  await using memberB = await tlsMember(b.cert, b.key, "b");
  const ca = `${one.dir}/rotated-ca.pem`;
  await Deno.copyFile(one.caFile, ca);
  const yaml = (port: number, keepalive = 32) =>
    config({
      members: members(`127.0.0.1:${port}`),
      keepalive,
      tls: { ca_file: ca, server_name: "api.internal" },
    });
  await using s = await startScalwsd(yaml(memberA.addr.port));
  const status = async () => (await get(s.url + "/", { host: "a.test" })).status;
  assert.equal(await status(), 200);
  // The file now holds the other CA; an unchanged pool keeps what it read.
  await Deno.copyFile(two.caFile, ca);
  assert.equal((await s.server.reload()).ok, true);
  assert.equal(await status(), 200);
  // A new member list is not a new pool: member b's certificate does not verify yet.
  await s.write(yaml(memberB.addr.port));
  assert.equal((await s.server.reload()).ok, true);
  assert.equal(await status(), 502);
  // A changed setting builds the pool again, which reads the file again.
  await s.write(yaml(memberB.addr.port, 16));
  assert.equal((await s.server.reload()).ok, true);
  assert.equal(await status(), 200);
});
