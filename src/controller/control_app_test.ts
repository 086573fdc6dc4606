import assert from "node:assert/strict";
import { setLogSink } from "../observe/log.ts";
import { type ControlTarget, createControlApp, serveControlSocket } from "./control_app.ts";
import { ControlError } from "./control_error.ts";

/** An instance's `GET /v1/cache` body: one application with `requests` (others 0). */
function cacheView(objects: number, bytes: number, requests: Record<string, number>): string {
  const r = { hit: 0, miss: 0, stale: 0, revalidated: 0, bypass: 0, collapsed: 0, ...requests };
  return JSON.stringify({ objects, bytes, applications: [{ tenant: "t", app: "a", requests: r }] });
}

function fake(calls: string[]): ControlTarget {
  return {
    status: () => Promise.resolve({ controller: { desired: 2 } }),
    metricsText: () => "scalws_controller_desired_instances 2\n",
    reload: () => {
      calls.push("reload");
      return Promise.resolve({ generation: 3, previous: 2, warnings: [] });
    },
    rollback: () => Promise.reject(new ControlError(409, "no previous generation to roll back to")),
    scale: (n) => {
      calls.push(`scale ${n}`);
      if (n > 4) {
        return Promise.reject(
          new ControlError(400, `instances: must be an integer between 1 and 4, not ${n}`),
        );
      }
      return Promise.resolve({ desired: n, previous: 1 });
    },
    setAutoscaling: (on) => {
      calls.push(`autoscaling ${on}`);
      return Promise.resolve({ autoscaling: on });
    },
    fromServingInstance: (path) => {
      calls.push(`get ${path}`);
      return Promise.resolve({ id: "web-1", generation: 3, status: 200, body: '{"upstreams":[]}' });
    },
    toEveryInstance: (req) => {
      calls.push(`all ${req.method} ${req.path} ${req.body ?? ""}`);
      if (req.body?.includes('"nope"')) {
        const bad = { status: 400, body: '{"error":"path: must start with \\"/\\""}' };
        return Promise.resolve([{ id: "web-0", ...bad }, { id: "web-1", ...bad }]);
      }
      if (req.method === "GET") {
        return Promise.resolve([
          { id: "web-0", status: 200, body: cacheView(2, 100, { hit: 3, miss: 1, bypass: 5 }) },
          { id: "web-1", status: 200, body: cacheView(3, 50, { hit: 1, stale: 1, miss: 2 }) },
        ]);
      }
      return Promise.resolve([
        { id: "web-0", status: 200, body: '{"purged":2}' },
        { id: "web-1", status: 200, body: '{"purged":3}' },
      ]);
    },
    upstreams: () => {
      calls.push("upstreams");
      return Promise.resolve({ instance: "web-1", generation: 3, upstreams: [], agree: true });
    },
    setMembers: (name, text) => {
      calls.push(`set ${name} ${text}`);
      if (name !== "api") return Promise.reject(new ControlError(404, `no pool named "${name}"`));
      return Promise.resolve({ name, instances: [{ id: "web-1", applied: true }] });
    },
  };
}

async function withApp(
  fn: (app: ReturnType<typeof createControlApp>, calls: string[], stops: number[]) => Promise<void>,
) {
  const calls: string[] = [];
  const stops: number[] = [];
  setLogSink(() => {});
  try {
    await fn(createControlApp(fake(calls), () => stops.push(1)), calls, stops);
  } finally {
    setLogSink(null);
  }
}

Deno.test("control API: status, reload, scale, autoscaling", async () => {
  await withApp(async (app, calls) => {
    assert.deepEqual(await (await app.request("/v1/status")).json(), {
      controller: { desired: 2 },
    });
    const r = await app.request("/v1/reload", { method: "POST" });
    assert.deepEqual([r.status, await r.json()], [200, {
      generation: 3,
      previous: 2,
      warnings: [],
    }]);
    const s = await app.request("/v1/scale", { method: "POST", body: '{"instances": 3}' });
    assert.deepEqual([s.status, await s.json()], [200, { desired: 3, previous: 1 }]);
    const d = await app.request("/v1/autoscaling/disable", { method: "POST" });
    assert.deepEqual(await d.json(), { autoscaling: false });
    await app.request("/v1/autoscaling/enable", { method: "POST" });
    assert.deepEqual(calls, ["reload", "scale 3", "autoscaling false", "autoscaling true"]);
  });
});

Deno.test("control API: refusals carry their status and message", async () => {
  await withApp(async (app) => {
    const big = await app.request("/v1/scale", { method: "POST", body: '{"instances": 9}' });
    assert.deepEqual([big.status, await big.json()], [400, {
      error: "instances: must be an integer between 1 and 4, not 9",
    }]);
    const bad = await app.request("/v1/scale", { method: "POST", body: "{" });
    assert.deepEqual([bad.status, await bad.json()], [400, { error: "body: invalid JSON" }]);
    const shape = await app.request("/v1/scale", { method: "POST", body: '{"n": 2}' });
    assert.deepEqual([shape.status, await shape.json()], [400, {
      error: 'body: expected {"instances": N}',
    }]);
    const rb = await app.request("/v1/rollback", { method: "POST" });
    assert.deepEqual([rb.status, await rb.json()], [409, {
      error: "no previous generation to roll back to",
    }]);
    assert.equal((await app.request("/v1/nope")).status, 404);
    // A known path with another method: 405 naming the ones it takes, as an instance answers.
    const get = await app.request("/v1/reload");
    assert.equal(get.status, 405);
    assert.equal(get.headers.get("allow"), "POST");
    assert.deepEqual(await get.json(), { error: "GET is not allowed on /v1/reload; use POST" });
    const del = await app.request("/v1/upstreams/api", { method: "DELETE" });
    assert.equal(del.headers.get("allow"), "GET, PUT");
    assert.equal((await app.request("/v1/autoscaling/enable")).headers.get("allow"), "POST");
  });
});

Deno.test("control API: upstreams with agreement; PUT goes to the controller's lists", async () => {
  await withApp(async (app, calls) => {
    for (const path of ["/upstreams", "/v1/upstreams"]) {
      const r = await app.request(path);
      assert.deepEqual([r.status, await r.json()], [200, {
        instance: "web-1",
        generation: 3,
        upstreams: [],
        agree: true,
      }]);
    }
    await app.request("/v1/upstreams/api");
    const put = await app.request("/v1/upstreams/api", { method: "PUT", body: '{"members": []}' });
    assert.deepEqual([put.status, await put.json()], [200, {
      name: "api",
      instances: [{ id: "web-1", applied: true }],
    }]);
    const missing = await app.request("/v1/upstreams/x", { method: "PUT", body: "{}" });
    assert.deepEqual([missing.status, await missing.json()], [404, { error: 'no pool named "x"' }]);
    const big = await app.request("/v1/upstreams/api", {
      method: "PUT",
      body: "x".repeat(2 * 1024 * 1024 + 1),
    });
    assert.deepEqual([big.status, await big.json()], [413, {
      error: "body is larger than 2097152 bytes",
    }]);
    assert.deepEqual(calls, [
      "upstreams",
      "upstreams",
      "get /v1/upstreams/api",
      'set api {"members": []}',
      "set x {}",
    ]);
  });
});

Deno.test("control API: stop answers 202, then calls onStop", async () => {
  await withApp(async (app, _calls, stops) => {
    const r = await app.request("/v1/stop", { method: "POST" });
    assert.deepEqual([r.status, await r.json()], [202, { stopping: true }]);
    assert.equal(stops.length, 0);
    await new Promise((res) => setTimeout(res, 5));
    assert.equal(stops.length, 1);
  });
});

Deno.test("serveControlSocket serves on a 0600 Unix socket", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-control-" });
  setLogSink(() => {});
  const path = `${dir}/control.sock`;
  await Deno.writeTextFile(path, "stale");
  const server = await serveControlSocket(path, createControlApp(fake([]), () => {}));
  try {
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    const client = Deno.createHttpClient({ proxy: { transport: "unix", path } });
    try {
      const r = await fetch("http://localhost/v1/status", { client });
      assert.deepEqual(await r.json(), { controller: { desired: 2 } });
    } finally {
      client.close();
    }
  } finally {
    await server.shutdown();
    setLogSink(null);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("control API: a cache purge goes to every instance and answers the sum", async () => {
  await withApp(async (app, calls) => {
    const body = '{"host":"a.test","path":"/x"}';
    const r = await app.request("/v1/cache/purge", { method: "POST", body });
    assert.equal(r.status, 200);
    const j = await r.json();
    assert.equal(j.purged, 5);
    assert.deepEqual(j.instances.map((i: { id: string }) => i.id), ["web-0", "web-1"]);
    assert.deepEqual(calls, [`all POST /v1/cache/purge ${body}`]);
    const bad = await app.request("/v1/cache/purge", {
      method: "POST",
      body: '{"host":"a","path":"nope"}',
    });
    assert.deepEqual([bad.status, await bad.json()], [400, { error: 'path: must start with "/"' }]);
    const stats = await (await app.request("/v1/cache")).json();
    assert.equal(stats.objects, 5);
    assert.equal(stats.bytes, 150);
    // Served from the cache over looked-up requests, every instance's: (3 + 1 + 1) / 8.
    assert.equal(stats.hit_ratio, 0.625);
  });
});
