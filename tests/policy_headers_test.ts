import assert from "node:assert/strict";
import { request, startScalwsd } from "./_support/mod.ts";
import { configErrors, type Echo, echoMember, HOST, oneApp } from "./_support/policies.ts";

Deno.test("headers: request and response set/add/remove with variables; Host through request.set", async () => {
  await using m = echoMember();
  await using s = await startScalwsd(oneApp(
    `{type: proxy, upstream: "http://${m.address}"}`,
    `        policies:
          - headers:
              request:
                set: {X-Env: prod, X-Orig: "$scheme://$host$path$query"}
                add: {X-Multi: two}
                remove: [X-Secret]
              response:
                set: {X-Frame-Options: DENY}
                add: {X-Served-By: scalwsd}
                remove: [X-Powered-By]
        routes:
          - path: /host
            policies: [{headers: {request: {set: {Host: backend.internal}}}}]
          - path: /alone
            inherit: false
            policies: [{headers: {response: {set: {X-Alone: "1"}}}}]`,
  ));
  const r = await request(`${s.url}/p?q=1`, {
    headers: { ...HOST, "x-secret": "s", "x-multi": "one", "x-env": "dev" },
  });
  assert.equal(r.status, 200);
  const seen = (JSON.parse(r.text) as Echo).headers;
  assert.equal(seen["x-env"], "prod");
  assert.equal(seen["x-orig"], "http://site.test/p?q=1");
  assert.equal(seen["x-multi"], "one, two");
  assert.equal(seen["x-secret"], undefined);
  assert.equal(seen["host"], m.address);
  assert.equal(r.headers.get("x-frame-options"), "DENY");
  assert.equal(r.headers.get("x-served-by"), "scalwsd");

  const h = await request(`${s.url}/host`, { headers: HOST });
  const hs = (JSON.parse(h.text) as Echo).headers;
  assert.equal(hs["host"], "backend.internal");
  assert.equal(hs["x-env"], "prod"); // the application's policies ran first

  const a = await request(`${s.url}/alone`, { headers: HOST });
  assert.equal(a.headers.get("x-alone"), "1");
  assert.equal(a.headers.get("x-frame-options"), null); // inherit: false
});

Deno.test("headers: hop-by-hop and framing headers, and Host outside request.set, are refused", () => {
  const yaml = oneApp(
    `{type: respond}`,
    `        policies:
          - headers:
              request: {set: {Connection: close, Transfer-Encoding: x}, add: {Host: h}, remove: [Upgrade]}
              response: {set: {Host: h, Content-Length: "1"}, add: {X-Ok: "$nope"}}
          - {headers: {request: {sett: {}}}}
          - {headerz: {}}
          - {headers: {}, cors: {}}`,
  );
  const errors = configErrors(yaml);
  const P = "tenants[0].applications[0].policies";
  assert.deepEqual(errors, [
    `${P}[0].headers.response.add.X-Ok: unknown variable "$nope"; use $host, $path, $query, $scheme (and $$ for "$")`,
    `${P}[1].headers.request: unknown key "sett"; did you mean "set"?`,
    `${P}[2]: unknown policy "headerz"; must be one of rewrite, redirect, headers, cors, basic_auth, allow, deny, compress, error_pages`,
    `${P}[3]: must have exactly one key naming the policy, found headers, cors`,
  ]);
  const yaml2 = oneApp(
    `{type: respond}`,
    `        policies:
          - headers:
              request: {set: {Connection: close, Transfer-Encoding: x}, add: {Host: h}, remove: [Upgrade]}
              response: {set: {Host: h, Content-Length: "1"}}`,
  );
  const H = "tenants[0].applications[0].policies[0].headers";
  assert.deepEqual(configErrors(yaml2), [
    `${H}.request.set.Connection: "Connection" is a hop-by-hop or framing header and cannot be changed`,
    `${H}.request.set.Transfer-Encoding: "Transfer-Encoding" is a hop-by-hop or framing header and cannot be changed`,
    `${H}.request.add.Host: Host can only be replaced (request.set.Host) or kept with preserve_host`,
    `${H}.request.remove: "Upgrade" is a hop-by-hop or framing header and cannot be changed`,
    `${H}.response.set.Host: Host is a request header`,
    `${H}.response.set.Content-Length: "Content-Length" is a hop-by-hop or framing header and cannot be changed`,
  ]);
});
