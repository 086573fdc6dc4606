/** `server.limits.max_header_count` on HTTP/2 (Deno.serve's HTTP/2 applies no count of its own). */
import assert from "node:assert/strict";
import { startPki, startScalwsd } from "./_support/mod.ts";
import { app, httpsListener, respond, scalwsYaml } from "./_support/yaml.ts";
import { curl } from "./_support/tls_client.ts";

Deno.test("HTTP/2 requests over max_header_count get 431, as HTTP/1.1 ones do", async () => {
  await using pki = await startPki();
  const a = await pki.issue("a", ["a.test"]);
  await using s = await startScalwsd(scalwsYaml({
    server: {
      listeners: [httpsListener(a)],
      admin: undefined,
      limits: { max_header_count: 20 },
    },
    apps: [app(respond("app a"))],
  }));
  const port = s.server.bound.get("https")!.port;
  const headers = (n: number) => Array.from({ length: n }, (_, i) => ["-H", `x-h${i}: v`]).flat();
  // curl sends 3 fields of its own (user-agent, accept, and host as :authority does not count).
  const ok = await curl(port, pki.caFile, "a.test", "/", ["--http2", ...headers(10)]);
  assert.deepEqual([ok.version, ok.status], ["2", 200]);
  const over = await curl(port, pki.caFile, "a.test", "/", ["--http2", ...headers(30)]);
  assert.deepEqual([over.version, over.status], ["2", 431]);
  const h1 = await curl(port, pki.caFile, "a.test", "/", ["--http1.1", ...headers(30)]);
  assert.deepEqual([h1.version, h1.status], ["1.1", 431]);
});
