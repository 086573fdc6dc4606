import assert from "node:assert/strict";
import { request, startMember, startScalwsd, tempDir } from "./_support/mod.ts";
import { configErrors, oneApp } from "./_support/policies.ts";
import { CHROMIUM, dumpDom } from "./_support/chromium.ts";

const CORS = `        policies:
          - cors:
              origins: ["ORIGIN", "https://*.example.com"]
              methods: [GET, PUT]
              headers: [X-Token]
              expose_headers: [X-Total]
              max_age: 10m`;

Deno.test("cors: preflight answered by scalwsd, actual requests get Access-Control-* and Vary: Origin", async () => {
  await using m = startMember("m", () => new Response("data", { headers: { "x-total": "3" } }));
  await using s = await startScalwsd(oneApp(
    `{type: proxy, upstream: "http://${m.address}"}`,
    CORS.replace("ORIGIN", "https://app.test"),
  ));
  const H = { host: "site.test" };
  const pre = await request(`${s.url}/api`, {
    method: "OPTIONS",
    headers: {
      ...H,
      origin: "https://app.test",
      "access-control-request-method": "PUT",
      "access-control-request-headers": "x-token, content-type",
    },
  });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get("access-control-allow-origin"), "https://app.test");
  assert.equal(pre.headers.get("access-control-allow-methods"), "GET, PUT");
  assert.equal(pre.headers.get("access-control-allow-headers"), "x-token, content-type");
  assert.equal(pre.headers.get("access-control-max-age"), "600");
  assert.equal(pre.headers.get("access-control-allow-credentials"), null);
  assert.equal(pre.headers.get("vary"), "Origin");
  assert.equal(m.count, 0); // the preflight never reached the member

  const wild = await request(`${s.url}/api`, {
    method: "OPTIONS",
    headers: { ...H, origin: "https://a.b.example.com", "access-control-request-method": "GET" },
  });
  assert.equal(wild.headers.get("access-control-allow-origin"), "https://a.b.example.com");

  for (
    const [origin, method, hdrs] of [
      ["https://evil.test", "PUT", undefined],
      ["https://app.test", "DELETE", undefined],
      ["https://app.test", "PUT", "x-other"],
      ["https://example.com", "GET", undefined],
    ] as const
  ) {
    const refused = await request(`${s.url}/api`, {
      method: "OPTIONS",
      headers: {
        ...H,
        origin,
        "access-control-request-method": method,
        ...(hdrs ? { "access-control-request-headers": hdrs } : {}),
      },
    });
    assert.equal(refused.status, 204);
    assert.equal(refused.headers.get("access-control-allow-origin"), null, `${origin} ${method}`);
    assert.equal(refused.headers.get("access-control-allow-methods"), null);
  }
  assert.equal(m.count, 0);

  const actual = await request(`${s.url}/api`, { headers: { ...H, origin: "https://app.test" } });
  assert.equal(actual.status, 200);
  assert.equal(actual.headers.get("access-control-allow-origin"), "https://app.test");
  assert.equal(actual.headers.get("access-control-expose-headers"), "x-total");
  assert.equal(actual.headers.get("vary"), "Origin");
  const other = await request(`${s.url}/api`, { headers: { ...H, origin: "https://evil.test" } });
  assert.equal(other.status, 200);
  assert.equal(other.headers.get("access-control-allow-origin"), null);
  assert.equal(other.headers.get("vary"), "Origin");
  const none = await request(`${s.url}/api`, { headers: H });
  assert.equal(none.headers.get("vary"), "Origin");
});

Deno.test("cors: credentials with * is a configuration error; * answers *", async () => {
  const errors = configErrors(
    oneApp(`{type: respond}`, `        policies: [{cors: {origins: ["*"], credentials: true}}]`),
  );
  assert.deepEqual(errors, [
    'tenants[0].applications[0].policies[0].cors.credentials: not allowed with origins "*"; list the origins that may send credentials',
  ]);
  await using s = await startScalwsd(
    oneApp(`{type: respond, body: ok}`, `        policies: [{cors: {origins: ["*"]}}]`),
  );
  const r = await request(`${s.url}/`, { headers: { host: "site.test", origin: "https://x.y" } });
  assert.equal(r.headers.get("access-control-allow-origin"), "*");
});

Deno.test("cors: an origin written with its default port matches what browsers send; a port past 65535 is an error", async () => {
  const errors = configErrors(
    oneApp(`{type: respond}`, `        policies: [{cors: {origins: ["https://a.test:99999"]}}]`),
  );
  assert.deepEqual(errors, [
    'tenants[0].applications[0].policies[0].cors.origins[0]: invalid origin "https://a.test:99999": the port must be 1 to 65535',
  ]);
  await using s = await startScalwsd(oneApp(
    `{type: respond, body: ok}`,
    `        policies: [{cors: {origins: ["https://a.test:443", "http://b.test:80", "https://c.test:8443"]}}]`,
  ));
  // Browsers leave the scheme's default port out of Origin (RFC 6454 6.1).
  for (
    const [origin, allowed] of [
      ["https://a.test", true],
      ["http://b.test", true],
      ["https://c.test:8443", true],
      ["https://c.test", false],
      ["http://a.test", false],
    ] as const
  ) {
    const r = await request(`${s.url}/`, { headers: { host: "site.test", origin } });
    assert.equal(r.headers.get("access-control-allow-origin"), allowed ? origin : null, origin);
  }
});

Deno.test({
  name:
    "cors: a page on another origin in headless Chromium is allowed, one on a third origin refused",
  ignore: CHROMIUM === undefined,
  async fn() {
    await using m = startMember("m", () => new Response("secret data"));
    // Two page origins: the allowed one and a refused one (same host, other ports).
    const page = (target: string) =>
      `<!doctype html><body>waiting<script>
fetch(${JSON.stringify(target)}, {method: "PUT", headers: {"X-Token": "t"}})
  .then(async (r) => { document.body.textContent = "ok:" + r.status + ":" + await r.text(); })
  .catch((e) => { document.body.textContent = "blocked:" + e.name; });
</script></body>`;
    let target = "";
    const pages = [0, 1].map(() =>
      Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen() {} },
        () => new Response(page(target), { headers: { "content-type": "text/html" } }),
      )
    );
    try {
      const allowed = `http://127.0.0.1:${pages[0].addr.port}`;
      await using s = await startScalwsd(
        oneApp(`{type: proxy, upstream: "http://${m.address}"}`, CORS.replace("ORIGIN", allowed))
          .replace("domains: [site.test]", "domains: [localhost]"),
      );
      target = `${s.url.replace("127.0.0.1", "localhost")}/api`;
      await using profileDir = await tempDir("scalwsd-chromium-");
      const dump = (url: string) => dumpDom(profileDir.path, url, 5000);
      assert.match(await dump(`${allowed}/`), /ok:200:secret data/);
      assert.equal(m.count, 1);
      assert.match(await dump(`http://127.0.0.1:${pages[1].addr.port}/`), /blocked:TypeError/);
      assert.equal(m.count, 1); // refused at the preflight: the PUT was never sent
    } finally {
      for (const p of pages) await p.shutdown();
    }
  },
});
