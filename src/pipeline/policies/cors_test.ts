import assert from "node:assert/strict";
import { corsPolicy, OriginMatcher } from "./cors.ts";
import { testExchange } from "../../../tests/_support/test_exchange.ts";

Deno.test("OriginMatcher: exact origins, wildcard subdomains with and without ports, *", () => {
  const m = new OriginMatcher([
    "https://a.test",
    "https://*.example.com",
    "http://*.dev.test:8080",
  ]);
  assert.ok(m.allows("https://a.test"));
  assert.ok(m.allows("HTTPS://A.TEST"));
  assert.ok(!m.allows("http://a.test"));
  assert.ok(m.allows("https://x.example.com"));
  assert.ok(m.allows("https://x.y.example.com"));
  assert.ok(!m.allows("https://example.com"));
  assert.ok(!m.allows("https://x.example.com:8443"));
  assert.ok(!m.allows("https://xexample.com"));
  assert.ok(m.allows("http://a.dev.test:8080"));
  assert.ok(!m.allows("http://a.dev.test"));
  assert.ok(new OriginMatcher(["*"]).allows("null"));
});

Deno.test("cors: a preflight is answered without the handler; Vary is added once", () => {
  const p = corsPolicy({
    policy: "cors",
    origins: ["https://a.test"],
    methods: ["GET", "PUT"],
    headers: ["x-token"],
    expose_headers: [],
    credentials: true,
  });
  const ex = testExchange("/", {
    method: "OPTIONS",
    headers: { origin: "https://a.test", "access-control-request-method": "PUT" },
  });
  const pre = p.request!(ex) as Response;
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get("access-control-allow-origin"), "https://a.test");
  assert.equal(pre.headers.get("access-control-allow-credentials"), "true");
  assert.equal(pre.headers.get("access-control-max-age"), null);
  const plainOptions = testExchange("/", { method: "OPTIONS" });
  assert.equal(p.request!(plainOptions), null);
  const res = p.response!(
    testExchange("/", { headers: { origin: "https://a.test" } }),
    new Response("x", { headers: { vary: "accept-encoding, origin" } }),
  );
  assert.equal(res.headers.get("vary"), "accept-encoding, origin");
  assert.equal(res.headers.get("access-control-allow-origin"), "https://a.test");
});
