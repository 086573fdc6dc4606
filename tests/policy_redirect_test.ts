import assert from "node:assert/strict";
import { request, startScalwsd } from "./_support/mod.ts";
import { configErrors, HOST, oneApp } from "./_support/policies.ts";

Deno.test("redirect: Location from $scheme $host $path $query, 308 by default, any listed status", async () => {
  await using s = await startScalwsd(oneApp(
    `{type: respond, body: app}`,
    `        routes:
          - path: /old
            policies: [{redirect: {to: "https://example.com$path$query"}}]
          - path: /moved
            policies: [{redirect: {to: "$scheme://$host/new$path", status: 301}}]
          - path: /see
            policies: [{rewrite: {strip_prefix: /see}}, {redirect: {to: "/other$path$$", status: 303}}]
          - path: /t
            policies: [{redirect: {to: /x, status: 307}}]
          - path: /f
            policies: [{redirect: {to: /y, status: 302}}]`,
  ));
  const go = async (path: string) => {
    const r = await request(`${s.url}${path}`, { headers: { host: "Site.Test:8080" } });
    return `${r.status} ${r.headers.get("location")} ${r.text.length}`;
  };
  assert.equal(await go("/old/a?b=1"), "308 https://example.com/old/a?b=1 0");
  assert.equal(await go("/moved/z"), "301 http://site.test/new/moved/z 0");
  assert.equal(await go("/see/1"), "303 /other/1$ 0");
  assert.equal(await go("/t"), "307 /x 0");
  assert.equal(await go("/f"), "302 /y 0");
  const app = await request(`${s.url}/other`, { headers: HOST });
  assert.equal(app.text, "app");
});

Deno.test("redirect: a whole listener sends http to https, whatever the host", async () => {
  await using s = await startScalwsd(`
server:
  listeners:
    - {name: http, address: "127.0.0.1:0", redirect: {to: "https://$host$path$query"}}
tenants:
  - name: t
    applications:
      - {name: app, domains: [site.test], runtime: {type: respond, body: app}}
`);
  const r = await request(`${s.url}/a/../b?c=d`, { headers: { host: "www.example.org:80" } });
  assert.equal(r.status, 308);
  assert.equal(r.headers.get("location"), "https://www.example.org/b?c=d");
  const bad = await request(`${s.url}/`, { headers: { host: "" } });
  assert.equal(bad.status, 400);
});

Deno.test("redirect: unknown variables, bad statuses and a missing target are refused", () => {
  const yaml = oneApp(
    `{type: respond}`,
    `        policies:
          - {redirect: {to: "https://$hostname/"}}
          - {redirect: {to: "/x", status: 300}}
          - {redirect: {}}
          - {redirect: {to: "https://example.org/a b"}}`,
  );
  const errors = configErrors(yaml);
  const P = "tenants[0].applications[0].policies";
  assert.deepEqual(errors, [
    `${P}[0].redirect.to: unknown variable "$hostname"; use $host, $path, $query, $scheme (and $$ for "$")`,
    `${P}[1].redirect.status: must be one of 301, 302, 303, 307, 308`,
    `${P}[2].redirect.to: is required`,
    `${P}[3].redirect.to: " " is not allowed in a URL; percent-encode it (a space is %20)`,
  ]);
});
