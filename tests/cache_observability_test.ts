/**
 * Cache metrics and logs: scalws_cache_requests_total by result, objects, bytes, evictions,
 * `promtool check metrics` clean, the access log's `cache` field (`-` where the route has no
 * cache), and a route's own `cache` or `cache: false`.
 */
import assert from "node:assert/strict";
import {
  adminFetch,
  get,
  members,
  proxy,
  request,
  scalwsYaml,
  scriptedMember,
  startScalwsd,
  tempDir,
} from "./_support/mod.ts";

async function promtool(text: string): Promise<{ code: number; out: string } | null> {
  let child;
  try {
    child = new Deno.Command("promtool", {
      args: ["check", "metrics"],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch {
    return null;
  }
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(text));
  await w.close();
  const o = await child.output();
  return {
    code: o.code,
    out: new TextDecoder().decode(o.stdout) + new TextDecoder().decode(o.stderr),
  };
}

Deno.test("cache metrics by result, the access log field, and routes with their own cache or none", async () => {
  await using m = scriptedMember((req) => {
    const path = new URL(req.url).pathname;
    if (req.headers.get("if-none-match") === '"e"') {
      return { status: 304, headers: { etag: '"e"' } };
    }
    return { body: path, headers: { "cache-control": "max-age=60", etag: '"e"' } };
  });
  await using dir = await tempDir();
  const logFile = `${dir.path}/access.log`;
  await using s = await startScalwsd(
    scalwsYaml({
      upstreams: { p: { members: members(m) } },
      apps: [{
        name: "www",
        domains: ["a.test"],
        runtime: proxy("p"),
        cache: {},
        routes: [
          { path: "/off", runtime: proxy("p"), cache: false },
          { path: "/own", runtime: proxy("p"), cache: { ignore_query: true } },
        ],
      }],
    }),
    { accessLog: logFile },
  );
  const h = { host: "a.test" };
  await get(s.url + "/x", h); // miss
  await get(s.url + "/x", h); // hit
  await get(s.url + "/x", { ...h, "cache-control": "no-cache" }); // revalidated
  await request(s.url + "/x", { method: "POST", headers: h, body: "" }); // bypass
  await get(s.url + "/off", h);
  await get(s.url + "/off", h);
  await get(s.url + "/own?a=1", h);
  const own = await get(s.url + "/own?a=2", h);
  assert.match(own.headers.get("cache-status")!, /^scalwsd; hit/);
  const off = await get(s.url + "/off", h);
  assert.equal(off.headers.get("cache-status"), null);
  const text = await (await adminFetch(s.adminSocket, "/metrics")).text();
  for (
    const line of [
      'scalws_cache_requests_total{tenant="t",app="www",result="miss"} 2',
      'scalws_cache_requests_total{tenant="t",app="www",result="hit"} 2',
      'scalws_cache_requests_total{tenant="t",app="www",result="revalidated"} 1',
      'scalws_cache_requests_total{tenant="t",app="www",result="bypass"} 1',
      "scalws_cache_objects 1", // the POST removed /x
      "scalws_cache_evictions_total 0",
    ]
  ) assert.ok(text.split("\n").includes(line), line);
  assert.match(text, /^scalws_cache_bytes \d+$/m);
  assert.match(text, /# TYPE scalws_cache_requests_total counter/);
  assert.match(text, /# TYPE scalws_cache_objects gauge/);
  assert.match(text, /# TYPE scalws_cache_bytes gauge/);
  assert.match(text, /# TYPE scalws_cache_evictions_total counter/);
  const checked = await promtool(text);
  if (checked !== null) {
    assert.equal(checked.code, 0, checked.out);
    assert.doesNotMatch(checked.out, /error/i);
  }
  await s.close();
  const lines = (await Deno.readTextFile(logFile)).trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((l) => [l.method, l.path, l.cache]), [
    ["GET", "/x", "miss"],
    ["GET", "/x", "hit"],
    ["GET", "/x", "revalidated"],
    ["POST", "/x", "bypass"],
    ["GET", "/off", "-"],
    ["GET", "/off", "-"],
    ["GET", "/own", "miss"],
    ["GET", "/own", "hit"],
    ["GET", "/off", "-"],
  ]);
});
