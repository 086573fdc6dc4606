/**
 * `server.tracing` against a real OTLP/HTTP receiver started by the test
 * (`_support/otlp_receiver.ts`): the span tree of a proxied request with a retry and an
 * ejection, a cached hit, a PHP request on Debian's PHP-FPM; W3C context passed to a member that
 * echoes it, a client's context believed only from trusted proxies or with `trust_client`; a
 * collector that answers 500, is slow or is down changes nothing for clients, and its spans are
 * dropped and counted. One scalwsd, reloaded between steps.
 */
import assert from "node:assert/strict";
import {
  adminFetch,
  members,
  request,
  scalwsYaml,
  startMember,
  startScalwsd,
  waitUntil,
} from "./_support/mod.ts";
import { type ReceivedSpan, startOtlpReceiver } from "./_support/otlp_receiver.ts";
import { phpFpmBinary, startPhpFpm } from "./_support/php_fpm.ts";

const UA = "tracing-test/1";
const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";

/** The member's echo: what it received of the trace context. */
interface Echo {
  traceparent: string | null;
  tracestate: string | null;
}

/** A port nothing listens on (bound, then closed). */
function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

function byTrace(spans: ReceivedSpan[], traceId: string): ReceivedSpan[] {
  return spans.filter((s) => s.traceId === traceId);
}

/** The server span whose `url.path` is `path` (the only one). */
function serverSpan(spans: ReceivedSpan[], path: string): ReceivedSpan | undefined {
  const found = spans.filter((s) => s.kind === 2 && s.attributes["url.path"] === path);
  assert.ok(found.length <= 1, `one server span for ${path}, got ${found.length}`);
  return found[0];
}

/** The client spans under `parent`, by attempt. */
function children(spans: ReceivedSpan[], parent: ReceivedSpan): ReceivedSpan[] {
  return spans.filter((s) => s.parentSpanId === parent.spanId && s.traceId === parent.traceId)
    .sort((a, b) =>
      Number(a.attributes["scalws.attempt"]) - Number(b.attributes["scalws.attempt"])
    );
}

async function dropped(socket: string): Promise<number> {
  const text = await (await adminFetch(socket, "/metrics")).text();
  const m = /^scalws_tracing_spans_dropped_total (\d+)/m.exec(text);
  assert.ok(m, "scalws_tracing_spans_dropped_total is exported");
  return Number(m[1]);
}

Deno.test("tracing: spans of proxied, cached and PHP requests; context; a failing collector", async (t) => {
  const hasPhp = phpFpmBinary() !== null;
  const tmp = await Deno.makeTempDir({ prefix: "scalwsd-tracing-" });
  await Deno.writeTextFile(
    `${tmp}/trace.php`,
    `<?php header('Content-Type: application/json'); echo json_encode([` +
      `'traceparent' => $_SERVER['HTTP_TRACEPARENT'] ?? null,` +
      `'tracestate' => $_SERVER['HTTP_TRACESTATE'] ?? null]);`,
  );
  await using otlp = startOtlpReceiver();
  await using bad = startMember("bad", () => new Response("down", { status: 503 }));
  await using good = startMember("good", (req) => {
    const echo: Echo = {
      traceparent: req.headers.get("traceparent"),
      tracestate: req.headers.get("tracestate"),
    };
    return Response.json(echo, {
      headers: new URL(req.url).pathname.startsWith("/cached")
        ? { "cache-control": "max-age=60" }
        : {},
    });
  });
  await using fpm = hasPhp ? await startPhpFpm() : null;
  const tracing = (extra: Record<string, unknown> = {}) => ({
    endpoint: otlp.url,
    sample_ratio: 1,
    service_name: "scalwsd-test",
    headers: { "x-api-key": "k1" },
    ...extra,
  });
  const yaml = (server: Record<string, unknown> = {}) =>
    scalwsYaml({
      server: { tracing: tracing(), ...server },
      upstreams: {
        api: {
          members: members(bad, good),
          balance: "failover",
          retries: 1,
          passive_health: { failures: 1, cooldown: "60s" },
        },
      },
      apps: [
        {
          name: "api",
          domains: ["api.test"],
          runtime: { type: "proxy", upstream: `http://${good.address}` },
          routes: [{ path: "/v1", runtime: { type: "proxy", upstream: { pool: "api" } } }],
        },
        {
          name: "cached",
          domains: ["cache.test"],
          runtime: { type: "proxy", upstream: `http://${good.address}` },
          cache: {},
        },
        ...(fpm === null ? [] : [{
          name: "php",
          domains: ["php.test"],
          runtime: { type: "php", root: tmp, fastcgi: fpm.address },
        }]),
      ],
    });
  const accessLog = `${tmp}/access.log`;
  await using s = await startScalwsd(yaml(), { accessLog, tracingBatchDelay: 50 });
  const get = (host: string, path: string, headers: Record<string, string> = {}) =>
    request(`${s.url}${path}`, { headers: { host, "user-agent": UA, ...headers } });
  const reload = async (server: Record<string, unknown>) => {
    await s.write(yaml(server));
    const r = await s.server.reload();
    assert.equal(r.ok, true, JSON.stringify(r));
  };

  try {
    await t.step("a proxied request retried on another member: the span tree", async () => {
      const res = await get("api.test", "/v1/items");
      assert.equal(res.status, 200);
      const echo: Echo = JSON.parse(res.text);
      const spans = await otlp.waitFor("the retried request's three spans", (all) => {
        const root = serverSpan(all, "/v1/items");
        return root !== undefined && byTrace(all, root.traceId).length >= 3;
      });
      const root = serverSpan(spans, "/v1/items")!;
      assert.equal(root.parentSpanId, "");
      assert.equal(root.name, "GET /v1");
      assert.equal(root.status, 0);
      assert.deepEqual(root.resource, { "service.name": "scalwsd-test" });
      assert.deepEqual(root.attributes, {
        "http.request.method": "GET",
        "url.path": "/v1/items",
        "url.scheme": "http",
        "server.address": "api.test",
        "server.port": new URL(s.url).port === "" ? 80 : Number(new URL(s.url).port),
        "client.address": "127.0.0.1",
        "network.protocol.version": "1.1",
        "user_agent.original": UA,
        "scalws.tenant": "t",
        "scalws.app": "api",
        "http.route": "/v1",
        "http.response.status_code": 200,
        "scalws.cache": "-",
      });
      const [first, second, ...more] = children(spans, root);
      assert.equal(more.length, 0);
      assert.equal(first.kind, 3);
      assert.equal(first.name, "GET");
      assert.deepEqual(first.attributes, {
        "http.request.method": "GET",
        "network.protocol.name": "http",
        "server.address": "127.0.0.1",
        "server.port": bad.port,
        "scalws.pool": "api",
        "scalws.attempt": 1,
        "http.response.status_code": 503,
        "error.type": "503",
      });
      assert.equal(first.status, 2);
      assert.deepEqual(first.events, [
        { name: "ejection", attributes: { "scalws.member": bad.address, "scalws.pool": "api" } },
        { name: "retry", attributes: { "scalws.retry_reason": "status" } },
      ]);
      assert.deepEqual(second.attributes, {
        "http.request.method": "GET",
        "network.protocol.name": "http",
        "server.address": "127.0.0.1",
        "server.port": good.port,
        "scalws.pool": "api",
        "scalws.attempt": 2,
        "http.request.resend_count": 1,
        "scalws.retry_reason": "status",
        "http.response.status_code": 200,
      });
      assert.equal(second.status, 0);
      // Attempts inside the request, in order.
      assert.ok(root.start <= first.start && first.end <= second.start && second.end <= root.end);
      // The member saw the second attempt as its parent.
      assert.equal(echo.traceparent, `00-${root.traceId}-${second.spanId}-01`);
      assert.equal(echo.tracestate, null);
      assert.equal(otlp.lastHeaders?.get("x-api-key"), "k1");
      assert.deepEqual(otlp.errors, []);
      // The access log names the trace.
      const line = await waitUntil(async () => {
        const text = await Deno.readTextFile(accessLog).catch(() => "");
        return text.split("\n").filter((l) => l.includes('"/v1/items"'))[0];
      }, { what: "the access log line of /v1/items" });
      assert.equal(JSON.parse(line).trace_id, root.traceId);
    });

    await t.step(
      "a method the conventions do not know: _OTHER, the original kept, HTTP in names",
      async () => {
        const res = await request(`${s.url}/v1/other`, {
          method: "MKCOL",
          headers: { host: "api.test", "user-agent": UA },
        });
        assert.ok(res.status > 0);
        const spans = await otlp.waitFor("the MKCOL request's spans", (all) => {
          const root = serverSpan(all, "/v1/other");
          return root !== undefined && children(all, root).length >= 1;
        });
        const root = serverSpan(spans, "/v1/other")!;
        assert.equal(root.name, "HTTP /v1");
        assert.equal(root.attributes["http.request.method"], "_OTHER");
        assert.equal(root.attributes["http.request.method_original"], "MKCOL");
        for (const c of children(spans, root)) {
          assert.equal(c.name, "HTTP");
          assert.equal(c.attributes["http.request.method"], "_OTHER");
          assert.equal(c.attributes["http.request.method_original"], "MKCOL");
        }
      },
    );

    await t.step("a cached hit: one server span, no member attempt", async () => {
      const miss = await get("cache.test", "/cached/a");
      assert.equal(miss.status, 200);
      const hit = await get("cache.test", "/cached/a");
      assert.equal(hit.status, 200);
      const spans = await otlp.waitFor(
        "two server spans of /cached/a",
        (all) =>
          all.filter((x) => x.kind === 2 && x.attributes["url.path"] === "/cached/a").length >= 2,
      );
      const [a, b] = spans.filter((x) => x.kind === 2 && x.attributes["url.path"] === "/cached/a");
      assert.equal(a.attributes["scalws.cache"], "miss");
      assert.equal(a.attributes["http.route"], "/");
      assert.equal(a.name, "GET /");
      const [fill] = children(spans, a);
      assert.equal(fill.attributes["server.port"], good.port);
      assert.equal(fill.attributes["scalws.pool"], undefined);
      assert.equal(b.attributes["scalws.cache"], "hit");
      assert.equal(b.attributes["http.response.status_code"], 200);
      assert.notEqual(a.traceId, b.traceId);
      assert.deepEqual(byTrace(spans, b.traceId), [b]);
    });

    await t.step({
      name: "a PHP request: a FastCGI client span, its context in HTTP_TRACEPARENT",
      ignore: !hasPhp,
      fn: async () => {
        const res = await get("php.test", "/trace.php");
        assert.equal(res.status, 200);
        const echo: Echo = JSON.parse(res.text);
        const spans = await otlp.waitFor("the PHP request's spans", (all) => {
          const root = serverSpan(all, "/trace.php");
          return root !== undefined && byTrace(all, root.traceId).length >= 2;
        });
        const root = serverSpan(spans, "/trace.php")!;
        assert.equal(root.attributes["scalws.app"], "php");
        const [fcgi, ...more] = children(spans, root);
        assert.equal(more.length, 0);
        assert.equal(fcgi.kind, 3);
        assert.equal(fcgi.name, "fastcgi GET");
        assert.equal(fcgi.attributes["network.protocol.name"], "fastcgi");
        assert.equal(fcgi.attributes["server.address"], fpm!.socket);
        assert.equal(fcgi.attributes["http.response.status_code"], 200);
        assert.equal(echo.traceparent, `00-${root.traceId}-${fcgi.spanId}-01`);
      },
    });

    await t.step(
      "a client's context: ignored from others, continued from trusted ones",
      async () => {
        const theirs = {
          traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
          tracestate: "vendor=x",
        };
        // Not a trusted proxy: a new trace; the client's context does not reach the member.
        const own: Echo = JSON.parse((await get("api.test", "/ignored", theirs)).text);
        let spans = await otlp.waitFor(
          "/ignored",
          (all) => serverSpan(all, "/ignored") !== undefined,
        );
        const fresh = serverSpan(spans, "/ignored")!;
        assert.notEqual(fresh.traceId, CLIENT_TRACE);
        assert.equal(fresh.parentSpanId, "");
        const [attempt] = children(spans, fresh);
        assert.deepEqual(own, {
          traceparent: `00-${fresh.traceId}-${attempt.spanId}-01`,
          tracestate: null,
        });

        for (
          const server of [{ trusted_proxies: ["127.0.0.1"] }, {
            tracing: tracing({ trust_client: true }),
          }]
        ) {
          await reload(server);
          const path = `/believed-${Object.keys(server)[0]}`;
          const echo: Echo = JSON.parse((await get("api.test", path, theirs)).text);
          spans = await otlp.waitFor(path, (all) => serverSpan(all, path) !== undefined);
          const root = serverSpan(spans, path)!;
          assert.equal(root.traceId, CLIENT_TRACE);
          assert.equal(root.parentSpanId, CLIENT_SPAN);
          assert.equal(root.traceState, "vendor=x");
          const [a] = children(spans, root);
          assert.deepEqual(echo, {
            traceparent: `00-${CLIENT_TRACE}-${a.spanId}-01`,
            tracestate: "vendor=x",
          });
        }
        // An unsampled parent is not traced, and passes on as it came.
        const unsampled = `00-${CLIENT_TRACE}-${CLIENT_SPAN}-00`;
        const passed: Echo = JSON.parse(
          (await get("api.test", "/unsampled", { traceparent: unsampled })).text,
        );
        assert.deepEqual(passed, { traceparent: unsampled, tracestate: null });
        await get("api.test", "/after-unsampled");
        spans = await otlp.waitFor(
          "/after-unsampled",
          (all) => serverSpan(all, "/after-unsampled") !== undefined,
        );
        assert.equal(serverSpan(spans, "/unsampled"), undefined);
      },
    );

    await t.step(
      "a collector that answers 500, is slow or is down changes nothing for clients",
      async () => {
        await reload({});
        const answered = async (path: string, n: number) => {
          for (let i = 0; i < n; i++) {
            const t0 = performance.now();
            const res = await get("cache.test", `${path}-${i}`);
            assert.equal(res.status, 200);
            assert.ok(
              performance.now() - t0 < 3000,
              `${path}-${i} answered without waiting for an export`,
            );
          }
        };
        // 500: the batch is dropped and counted, the failure logged once.
        otlp.mode = "fail";
        const before = await dropped(s.adminSocket);
        await answered("/fail", 3);
        await waitUntil(async () => await dropped(s.adminSocket) >= before + 6, {
          what: "the spans of three requests counted as dropped",
        });
        assert.equal(s.logs.filter((l) => l.includes('"tracing_export_failed"')).length, 1);

        // Slow: one export held; a queue of 4 fills and the rest is dropped.
        otlp.mode = "slow";
        await reload({ tracing: tracing({ queue_size: 4 }) });
        const held = otlp.requests;
        await answered("/slow-a", 1);
        await waitUntil(() => otlp.requests > held, {
          what: "an export held by the slow collector",
        });
        const slowBefore = await dropped(s.adminSocket);
        await answered("/slow-b", 6);
        assert.equal(await dropped(s.adminSocket), slowBefore + 12 - 4);
        otlp.mode = "ok";

        // Down: nothing listens at the endpoint.
        await reload({
          tracing: tracing({ endpoint: `http://127.0.0.1:${closedPort()}/v1/traces` }),
        });
        const downBefore = await dropped(s.adminSocket);
        await answered("/down", 3);
        await waitUntil(async () => await dropped(s.adminSocket) >= downBefore + 6, {
          what: "the spans of three requests to a collector that is down counted as dropped",
        });
        assert.deepEqual(otlp.errors, []);
      },
    );
  } finally {
    otlp.mode = "ok";
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
});
