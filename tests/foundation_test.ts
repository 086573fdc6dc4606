import assert from "node:assert/strict";
import {
  adminFetch,
  app,
  get,
  respond,
  scalwsYaml,
  sleep,
  startMember,
  startScalwsd,
} from "./_support/mod.ts";

/**
 * Tenant acme: application www (routes /api and /api/v2) and application other. `server` adds
 * server keys; `www` is www's body; `apiStatus` the status of /api.
 */
function config(
  { server = {}, www = "www", apiStatus = 201 }: {
    server?: Record<string, unknown>;
    www?: string;
    apiStatus?: number;
  } = {},
): string {
  return scalwsYaml({
    server: { metrics: { address: "127.0.0.1:0" }, ...server },
    tenants: [{
      name: "acme",
      applications: [
        app(respond(www, { status: 200 }), {
          name: "www",
          domains: ["example.test", "*.wild.test"],
          routes: [
            { path: "/api", runtime: respond("api", { status: apiStatus }) },
            { path: "/api/v2", runtime: respond("v2", { status: 202 }) },
          ],
        }),
        app(respond("other", { headers: { "x-app": "other" } }), {
          name: "other",
          domains: ["other.test"],
        }),
      ],
    }],
  });
}

const BASE = config();

async function raw(port: number, text: string): Promise<string> {
  using conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(text));
  const buf = new Uint8Array(16384);
  let out = "";
  for (;;) {
    const n = await conn.read(buf);
    if (n === null) break;
    out += new TextDecoder().decode(buf.subarray(0, n));
    if (out.includes("\r\n\r\n")) break;
  }
  return out;
}

Deno.test("requests are routed by host, then by longest segment-aligned prefix", async () => {
  await using s = await startScalwsd(BASE);
  const cases: [string, string, number, string][] = [
    ["example.test", "/", 200, "www"],
    ["example.test", "/api", 201, "api"],
    ["example.test", "/api/x", 201, "api"],
    ["example.test", "/apix", 200, "www"],
    ["example.test", "/api/v2/users", 202, "v2"],
    ["a.wild.test", "/", 200, "www"],
    ["other.test:8080", "/api", 200, "other"],
    ["EXAMPLE.test", "/api", 201, "api"],
  ];
  for (const [host, path, status, body] of cases) {
    const r = await get(s.url + path, { host });
    assert.equal(r.status, status, `${host}${path}`);
    assert.equal(r.text, body, `${host}${path}`);
  }
  assert.equal((await get(s.url + "/", { host: "other.test" })).headers.get("x-app"), "other");
});

Deno.test("unknown hosts get 404, a.b under a single-label wildcard too", async () => {
  await using s = await startScalwsd(BASE);
  assert.equal((await get(s.url + "/", { host: "nope.test" })).status, 404);
  assert.equal((await get(s.url + "/", { host: "a.b.wild.test" })).status, 404);
  assert.equal((await get(s.url + "/", { host: "wild.test" })).status, 404);
});

Deno.test("default_host answers unknown hosts", async () => {
  await using s = await startScalwsd(
    config({ server: { default_host: "other.test" } }),
  );
  const r = await get(s.url + "/", { host: "nope.test" });
  assert.equal(r.status, 200);
  assert.equal(r.text, "other");
});

Deno.test("a Host that is no host name gets 400, even with default_host", async () => {
  await using s = await startScalwsd(config({ server: { default_host: "other.test" } }));
  const port = Number(new URL(s.url).port);
  for (const host of ["example.test?x", "example.test:abc", "u@example.test", "Example.test/x"]) {
    assert.match(
      await raw(port, `GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
      /^HTTP\/1\.1 400 Bad Request\r\n/,
      host,
    );
  }
  assert.match(
    await raw(port, "GET / HTTP/1.1\r\nHost: Example.test:80\r\nConnection: close\r\n\r\n"),
    /^HTTP\/1\.1 200/,
  );
});

Deno.test("missing or duplicate Host gets 400", async () => {
  await using s = await startScalwsd(BASE);
  const port = Number(new URL(s.url).port);
  assert.match(await raw(port, "GET / HTTP/1.1\r\n\r\n"), /^HTTP\/1\.1 400/);
  assert.match(
    await raw(port, "GET / HTTP/1.1\r\nHost: example.test\r\nHost: other.test\r\n\r\n"),
    /^HTTP\/1\.1 400/,
  );
  assert.match(
    await raw(port, "GET / HTTP/1.1\r\nHost: example.test\r\n\r\n"),
    /^HTTP\/1\.1 200/,
  );
});

Deno.test("dot segments and double slashes are normalised before routing and never climb above /", async () => {
  await using s = await startScalwsd(BASE);
  const port = Number(new URL(s.url).port);
  const send = (path: string) =>
    raw(port, `GET ${path} HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\n\r\n`);
  assert.match(await send("/x/../api"), /^HTTP\/1\.1 201/);
  assert.match(await send("//api//v2"), /^HTTP\/1\.1 202/);
  assert.match(await send("/api/../../../api/v2"), /^HTTP\/1\.1 202/);
  assert.match(await send("/api/%2e%2e/x"), /^HTTP\/1\.1 200/);
});

Deno.test("percent-encoded unreserved characters are decoded before routing; %2F is not", async () => {
  await using s = await startScalwsd(BASE);
  const port = Number(new URL(s.url).port);
  const send = (path: string) =>
    raw(port, `GET ${path} HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\n\r\n`);
  // A member decodes /%61pi as /api: the route of /api must be the one that answers.
  assert.match(await send("/%61pi"), /^HTTP\/1\.1 201/);
  assert.match(await send("/%61%70%69/%76%32"), /^HTTP\/1\.1 202/);
  assert.match(await send("/api/%76%32/x"), /^HTTP\/1\.1 202/);
  // An encoded slash is data, not a separator: no route of /api/v2 for it.
  assert.match(await send("/api%2Fv2"), /^HTTP\/1\.1 200/);
});

Deno.test("the admin socket answers readyz and metrics with mode 0600", async () => {
  await using s = await startScalwsd(BASE);
  const sock = s.adminSocket;
  assert.equal((await Deno.stat(sock)).mode! & 0o777, 0o600);
  const r = await adminFetch(sock, "/readyz");
  assert.equal(r.status, 200);
  assert.deepEqual(await r.json(), { generation: 1, state: "ready" });
  await get(s.url + "/", { host: "example.test" });
  await get(s.url + "/", { host: "nope.test" });
  const m = await (await adminFetch(sock, "/metrics")).text();
  assert.match(m, /scalws_http_requests_total\{tenant="acme",app="www",class="2xx"\} 1/);
  // Refused before routing (unknown host): counted under tenant and app "-".
  assert.match(m, /scalws_http_requests_total\{tenant="-",app="-",class="4xx"\} 1/);
});

Deno.test("the metrics listener serves /metrics, /readyz and /livez only", async () => {
  await using s = await startScalwsd(BASE);
  const m = s.admin.bound.get("metrics")!;
  const base = `http://127.0.0.1:${m.port}`;
  assert.equal((await get(base + "/metrics")).status, 200);
  assert.equal((await get(base + "/readyz")).status, 200);
  assert.equal((await get(base + "/livez")).status, 200);
  assert.equal((await get(base + "/v1/upstreams")).status, 404);
  assert.equal((await get(base + "/console/")).status, 404);
});

Deno.test("a reload swaps the generation; a refused reload changes nothing and answers 400", async () => {
  await using s = await startScalwsd(BASE);
  const sock = s.adminSocket;
  await s.write(config({ www: "www2" }));
  let r = await adminFetch(sock, "/v1/reload", { method: "POST" });
  assert.equal(r.status, 200);
  assert.equal((await r.json()).generation, 2);
  assert.equal((await get(s.url + "/", { host: "example.test" })).text, "www2");

  await s.write(config({ apiStatus: 99 }));
  r = await adminFetch(sock, "/v1/reload", { method: "POST" });
  assert.equal(r.status, 400);
  const body = await r.json();
  assert.match(body.error, /tenants\[0\]\.applications\[0\]\.routes\[0\]\.runtime\.status/);
  assert.equal((await get(s.url + "/", { host: "example.test" })).text, "www2");
  assert.deepEqual(await (await adminFetch(sock, "/readyz")).json(), {
    generation: 2,
    state: "ready",
  });
});

Deno.test("a request keeps the generation it started with across a reload", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  await using member = startMember("slow", async () => {
    await gate;
    return new Response("old");
  });
  const yaml = (runtime: unknown) => scalwsYaml({ apps: [app(runtime)] });
  await using s = await startScalwsd(
    yaml({ type: "proxy", upstream: `http://${member.address}` }),
  );
  try {
    const inflight = get(s.url + "/", { host: "a.test" });
    await sleep(50);
    await s.write(yaml(respond("new")));
    const r = await adminFetch(s.adminSocket, "/v1/reload", { method: "POST" });
    assert.equal(r.status, 200);
    assert.equal((await get(s.url + "/", { host: "a.test" })).text, "new");
    release();
    assert.equal((await inflight).text, "old");
  } finally {
    release();
  }
});
