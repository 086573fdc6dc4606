/**
 * The affinity cookie carries `Secure` on requests that came over HTTPS (HTTP/1.1 and HTTP/2),
 * and not on plain HTTP (ADR-0049 "Affinity cookie").
 */
import assert from "node:assert/strict";
import {
  app,
  get,
  members,
  proxy,
  scalwsYaml,
  startMember,
  startPki,
  startScalwsd,
} from "./_support/mod.ts";
import { curl } from "./_support/tls_client.ts";

const COOKIE = /^SCALWS_AFFINITY=[0-9a-f]{32}; Path=\/; HttpOnly; SameSite=Lax/;

Deno.test("the affinity cookie is Secure over HTTPS (HTTP/1.1 and HTTP/2), not over HTTP", async () => {
  await using pki = await startPki();
  const c = await pki.issue("a", ["a.test"]);
  await using m = startMember("m");
  await using s = await startScalwsd(scalwsYaml({
    server: {
      listeners: [
        { name: "http", address: "127.0.0.1:0" },
        { name: "https", address: "127.0.0.1:0", tls: { certificates: [c] } },
      ],
    },
    upstreams: { p: { members: members(m), balance: "hash", hash: { by: "cookie" } } },
    apps: [app(proxy("p"))],
  }));
  const port = s.server.bound.get("https")!.port;
  for (const version of ["--http1.1", "--http2"]) {
    const r = await curl(port, pki.caFile, "a.test", "/", [version]);
    assert.equal(r.status, 200, version);
    const line = r.headers.split("\r\n").find((l) => /^set-cookie:/i.test(l));
    const value = line?.replace(/^set-cookie:\s*/i, "") ?? "";
    assert.match(value, COOKIE, version);
    assert.match(value, /; Secure$/, version);
  }
  const plain = await get(`http://127.0.0.1:${s.server.bound.get("http")!.port}/`, {
    host: "a.test",
  });
  const cookie = plain.headers.get("set-cookie") ?? "";
  assert.match(cookie, COOKIE);
  assert.doesNotMatch(cookie, /Secure/);
});
