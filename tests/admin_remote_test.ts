import assert from "node:assert/strict";
import https from "node:https";
import {
  ADMIN_SOCKET,
  app,
  get,
  respond,
  scalwsYaml,
  startPki,
  startScalwsd,
  waitUntil,
} from "./_support/mod.ts";

function httpsGet(
  port: number,
  path: string,
  opts: { ca: string; cert?: string; key?: string; method?: string; body?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({
      hostname: "127.0.0.1",
      port,
      path,
      method: opts.method ?? "GET",
      ca: opts.ca,
      cert: opts.cert,
      key: opts.key,
      servername: "localhost",
      agent: false,
    }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => body += c);
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

Deno.test("the remote admin listener requires a client certificate signed by client_ca", async () => {
  await using pki = await startPki();
  const { cert, key } = await pki.issue("server", ["localhost", "127.0.0.1"]);
  const { cert: ccert, key: ckey } = await pki.issue("client", ["ops"], { clientAuth: true });
  await using other = await startPki();
  const { cert: bcert, key: bkey } = await other.issue("bad", ["mallory"], { clientAuth: true });
  await using s = await startScalwsd(scalwsYaml({
    server: {
      admin: {
        ...ADMIN_SOCKET,
        remote: { address: "127.0.0.1:0", tls: { cert, key, client_ca: pki.caFile } },
      },
      metrics: { address: "127.0.0.1:0" },
    },
    upstreams: { dyn: { members_from: "api" } },
    apps: [app(respond("a"))],
  }));
  const port = s.admin.bound.get("remote")!.port;
  const ca = pki.ca;
  const c = { ca, cert: await Deno.readTextFile(ccert), key: await Deno.readTextFile(ckey) };
  const r = await httpsGet(port, "/v1/upstreams", c);
  assert.equal(r.status, 200);
  assert.equal(JSON.parse(r.body).upstreams[0].name, "dyn");
  const put = await httpsGet(port, "/v1/upstreams/dyn", {
    ...c,
    method: "PUT",
    body: '{"members": []}',
  });
  assert.equal(put.status, 200);
  const audit = s.logs.map((l) => JSON.parse(l)).find((l) => l.event === "admin_audit");
  assert.match(audit.who, /CN=ops/);
  assert.equal((await httpsGet(port, "/console/", c)).status, 200);

  await assert.rejects(httpsGet(port, "/v1/upstreams", { ca }));
  await assert.rejects(httpsGet(port, "/v1/upstreams", {
    ca,
    cert: await Deno.readTextFile(bcert),
    key: await Deno.readTextFile(bkey),
  }));
  const metrics = s.admin.bound.get("metrics")!;
  assert.equal((await get(`http://127.0.0.1:${metrics.port}/v1/upstreams`)).status, 404);
});

Deno.test("the remote admin listener logs why it refused a client certificate (X.509 v1)", async () => {
  await using pki = await startPki();
  const { cert, key } = await pki.issue("server", ["localhost", "127.0.0.1"]);
  // What a bare `openssl x509 -req` makes: a version 1 certificate, signed by client_ca.
  const run = async (args: string[]) => {
    const out = await new Deno.Command("openssl", { args, cwd: pki.dir, stderr: "piped" }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
  };
  await run([
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    "v1.key",
    "-out",
    "v1.csr",
    "-subj",
    "/CN=ops",
  ]);
  await run([
    "x509",
    "-req",
    "-in",
    "v1.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "v1.crt",
    "-days",
    "1",
  ]);
  await using s = await startScalwsd(scalwsYaml({
    server: {
      admin: {
        ...ADMIN_SOCKET,
        remote: { address: "127.0.0.1:0", tls: { cert, key, client_ca: pki.caFile } },
      },
    },
    apps: [app(respond("a"))],
  }));
  const port = s.admin.bound.get("remote")!.port;
  await assert.rejects(httpsGet(port, "/v1/upstreams", {
    ca: pki.ca,
    cert: await Deno.readTextFile(`${pki.dir}/v1.crt`),
    key: await Deno.readTextFile(`${pki.dir}/v1.key`),
  }));
  const line = await waitUntil(
    () => s.logs.map((l) => JSON.parse(l)).find((l) => l.event === "tls_handshake_failed"),
    { what: "a tls_handshake_failed line", timeoutMs: 10_000 },
  );
  assert.equal(line.listener, "admin.remote");
  assert.equal(line.peer, "127.0.0.1");
  assert.match(line.reason, /X\.509 v3/);
  assert.equal(line.sni, "localhost");
});

Deno.test("the remote admin listener answers a member PUT over 2 MiB with 413, declared or chunked", async () => {
  await using pki = await startPki();
  const { cert, key } = await pki.issue("server", ["localhost", "127.0.0.1"]);
  const { cert: ccert, key: ckey } = await pki.issue("client", ["ops"], { clientAuth: true });
  await using s = await startScalwsd(scalwsYaml({
    server: {
      admin: {
        ...ADMIN_SOCKET,
        remote: { address: "127.0.0.1:0", tls: { cert, key, client_ca: pki.caFile } },
      },
    },
    upstreams: { dyn: { members_from: "api", members: [{ address: "127.0.0.1:9" }] } },
    apps: [app(respond("a"))],
  }));
  const port = s.admin.bound.get("remote")!.port;
  const c = {
    ca: pki.ca,
    cert: await Deno.readTextFile(ccert),
    key: await Deno.readTextFile(ckey),
  };
  const big = '{"members": [' + " ".repeat(3 * 1024 * 1024) + "]}";
  const declared = await httpsGet(port, "/v1/upstreams/dyn", { ...c, method: "PUT", body: big });
  assert.deepEqual([declared.status, JSON.parse(declared.body)], [413, {
    error: "body is larger than 2097152 bytes",
  }]);
  // Without a length: node sends the pieces chunked.
  const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = https.request({
      hostname: "127.0.0.1",
      port,
      path: "/v1/upstreams/dyn",
      method: "PUT",
      ...c,
      servername: "localhost",
      agent: false,
    }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => body += d);
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    for (let i = 0; i < 48; i++) req.write(" ".repeat(64 * 1024));
    req.end();
  });
  assert.deepEqual([chunked.status, JSON.parse(chunked.body)], [413, {
    error: "body is larger than 2097152 bytes",
  }]);
  const pool = JSON.parse((await httpsGet(port, "/v1/upstreams/dyn", c)).body);
  assert.deepEqual(pool.members.map((m: { address: string }) => m.address), ["127.0.0.1:9"]);
});
