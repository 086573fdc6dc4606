import assert from "node:assert/strict";
import { request, startMember, startScalwsd } from "./_support/mod.ts";
import { HOST, oneApp } from "./_support/policies.ts";

Deno.test("error_pages: scalwsd's own errors get the page, members' only with intercept", async () => {
  await using m = startMember("m", (req) => {
    const p = new URL(req.url).pathname;
    if (p.endsWith("/missing")) return new Response("member 404", { status: 404 });
    return new Response("fine");
  });
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/404.html`, "<h1>not here</h1>");
  await Deno.writeTextFile(`${dir}/403.html`, "<h1>go away</h1>");
  await Deno.writeTextFile(`${dir}/502.html`, "<h1>upstream down</h1>");
  await using s = await startScalwsd(oneApp(
    `{type: proxy, upstream: "http://${m.address}"}`,
    `        policies: [{error_pages: {404: "${dir}/404.html", 403: "${dir}/403.html", 502: "${dir}/502.html"}}]
        routes:
          - path: /down
            proxy: {upstream: "http://127.0.0.1:1"}
          - path: /deny
            policies: [{deny: [0.0.0.0/0, "::/0"]}]
          - path: /cut
            inherit: false
            policies: [{error_pages: {404: "${dir}/404.html", intercept: true}}]
          - path: /api
            methods: [GET]`,
  ));
  await Deno.remove(dir, { recursive: true });
  const page = async (path: string, method = "GET") => {
    const r = await request(`${s.url}${path}`, { method, headers: HOST });
    return `${r.status} ${r.headers.get("content-type")} ${r.text}`;
  };
  assert.equal(await page("/down/x"), "502 text/html; charset=utf-8 <h1>upstream down</h1>");
  assert.equal(await page("/deny"), "403 text/html; charset=utf-8 <h1>go away</h1>");
  assert.equal(await page("/missing"), "404 text/plain;charset=UTF-8 member 404");
  assert.equal(await page("/cut/missing"), "404 text/html; charset=utf-8 <h1>not here</h1>");
  const notAllowed = await request(`${s.url}/api`, { method: "POST", headers: HOST });
  assert.equal(notAllowed.status, 405); // no page for 405: the plain answer stays
  assert.equal(notAllowed.headers.get("allow"), "GET");
  assert.equal(await page("/fine"), "200 text/plain;charset=UTF-8 fine");
});

Deno.test("error_pages: missing and oversized files and bad statuses are configuration errors", async () => {
  const { parseConfig } = await import("../src/config/load.ts");
  const { ConfigError } = await import("../src/config/errors.ts");
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeFile(`${dir}/big.html`, new Uint8Array(70_000));
    parseConfig(
      oneApp(
        `{type: respond}`,
        `        policies: [{error_pages: {404: big.html, 503: none.html, 200: x.html, intercept: 1}}]`,
      ),
      `${dir}/scalws.yaml`,
    );
    assert.fail("accepted");
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    const P = "tenants[0].applications[0].policies[0].error_pages";
    assert.equal(e.errors.length, 4);
    assert.equal(e.errors[0], `${P}: unknown key "200"; use a status from 400 to 599 or intercept`);
    assert.equal(e.errors[1], `${P}.404: "big.html" is larger than 64 KiB`);
    assert.match(
      e.errors[2],
      /^tenants\[0\]\.applications\[0\]\.policies\[0\]\.error_pages\.503: cannot read "none\.html"/,
    );
    assert.equal(e.errors[3], `${P}.intercept: must be true or false`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("error_pages on a cached route: a member's error answer stays the member's when served from the cache", async () => {
  await using m = startMember("m", (req) => {
    const p = new URL(req.url).pathname;
    const headers = { "cache-control": "max-age=600" };
    if (p === "/missing") return new Response("member 404", { status: 404, headers });
    return new Response("fine", { headers });
  });
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/404.html`, "<h1>not here</h1>");
  await using s = await startScalwsd(oneApp(
    `{type: proxy, upstream: "http://${m.address}"}`,
    `        cache: {}
        policies: [{error_pages: {404: "${dir}/404.html"}}]
        routes:
          - path: /own
            runtime: {type: respond, status: 404, body: own, headers: {Cache-Control: "max-age=600"}}`,
  ));
  await Deno.remove(dir, { recursive: true });
  const get = async (path: string) => {
    const r = await request(`${s.url}${path}`, { headers: HOST });
    return `${r.status} ${r.text} ${/hit/.test(r.headers.get("cache-status") ?? "")}`;
  };
  // Without intercept the member's page passes, from the member and from the store alike.
  assert.equal(await get("/missing"), "404 member 404 false");
  assert.equal(await get("/missing"), "404 member 404 true");
  // scalwsd's own error gets the page both times.
  assert.equal(await get("/own"), "404 <h1>not here</h1> false");
  assert.equal(await get("/own"), "404 <h1>not here</h1> true");
});
