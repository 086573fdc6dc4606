import assert from "node:assert/strict";
import { request, startScalwsd } from "./_support/mod.ts";
import { type Echo, echoMember, HOST, oneApp } from "./_support/policies.ts";

Deno.test("policy order: application's first, then the route's, in list order; answers go back out in reverse", async () => {
  const m = echoMember();
  try {
    await using s = await startScalwsd(oneApp(
      `{type: proxy, upstream: "http://${m.address}"}`,
      `        policies:
          - {headers: {request: {set: {X-Step: app}}, response: {add: {X-Out: app}}}}
          - {rewrite: {strip_prefix: /v1}}
        routes:
          - path: /v1/a
            policies:
              - {headers: {request: {set: {X-Step: "route $path"}}, response: {add: {X-Out: route}}}}
          - path: /v1/gone
            policies:
              - {redirect: {to: "/new$path"}}
              - {headers: {response: {add: {X-Out: never}}}}
          - path: /v1/own
            inherit: false
            policies: [{headers: {request: {set: {X-Step: own}}}}]`,
    ));
    const a = await request(`${s.url}/v1/a/b`, { headers: HOST });
    const echo = JSON.parse(a.text) as Echo;
    // The application's rewrite ran before the route's header, which sees the new path.
    assert.equal(echo.path, "/a/b");
    assert.equal(echo.headers["x-step"], "route /a/b");
    // Response phases in reverse: the route's policy first, then the application's.
    assert.equal(a.headers.get("x-out"), "route, app");

    // A policy's own answer passes back only through the policies before it.
    const gone = await request(`${s.url}/v1/gone/x`, { headers: HOST });
    assert.equal(gone.status, 308);
    assert.equal(gone.headers.get("location"), "/new/gone/x");
    assert.equal(gone.headers.get("x-out"), "app");

    const own = await request(`${s.url}/v1/own`, { headers: HOST });
    const ownEcho = JSON.parse(own.text) as Echo;
    assert.equal(ownEcho.path, "/v1/own"); // inherit: false: no rewrite from the application
    assert.equal(ownEcho.headers["x-step"], "own");
    assert.equal(own.headers.get("x-out"), null);
  } finally {
    await m.close();
  }
});
