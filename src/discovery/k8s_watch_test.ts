import assert from "node:assert/strict";
import { setLogSink } from "../observe/log.ts";
import { type ChangeReason, KubeWatch, objectKey } from "./k8s_watch.ts";

const obj = (name: string, rv: string, extra: Record<string, unknown> = {}) => ({
  metadata: { name, namespace: "ns", resourceVersion: rv },
  ...extra,
});

/**
 * A fake API server over real HTTP: the first list fails (500), the second lists a and b at
 * version 10; the watch from 10 streams ADDED c, MODIFIED a, a BOOKMARK at 15, then a 410
 * ERROR event mid-stream; the relist at 20 has a and c; the watch from 20 streams DELETED c and
 * stays open.
 */
function fakeApiServer() {
  const requests: string[] = [];
  let lists = 0;
  const enc = new TextEncoder();
  const stream = (events: unknown[], keepOpen: boolean) =>
    new ReadableStream<Uint8Array>({
      async start(c) {
        for (const e of events) {
          c.enqueue(enc.encode(JSON.stringify(e) + "\n"));
          await new Promise((r) => setTimeout(r, 20));
        }
        if (!keepOpen) c.close();
      },
    });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const u = new URL(req.url);
    requests.push(u.pathname + u.search);
    if (req.headers.get("authorization") !== "Bearer t0ken") {
      return new Response("", { status: 401 });
    }
    if (u.searchParams.get("watch") !== "1") {
      lists++;
      if (lists === 1) return new Response("etcd is sad", { status: 500 });
      if (lists === 2) {
        return Response.json({
          metadata: { resourceVersion: "10" },
          items: [obj("a", "5"), obj("b", "6")],
        });
      }
      return Response.json({
        metadata: { resourceVersion: "20" },
        items: [obj("a", "12", { v: 2 }), obj("c", "11")],
      });
    }
    const rv = u.searchParams.get("resourceVersion");
    if (rv === "10") {
      return new Response(stream([
        { type: "ADDED", object: obj("c", "11") },
        { type: "MODIFIED", object: obj("a", "12", { v: 2 }) },
        { type: "BOOKMARK", object: { metadata: { resourceVersion: "15" } } },
        { type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired" } },
      ], false));
    }
    if (rv === "20") {
      return new Response(stream([{ type: "DELETED", object: obj("c", "21") }], true));
    }
    return new Response("unexpected", { status: 400 });
  });
  return { server, requests, url: `http://127.0.0.1:${server.addr.port}` };
}

Deno.test("KubeWatch lists, watches from the list's version, follows bookmarks, relists on 410, backs off on errors", async () => {
  const logs: string[] = [];
  setLogSink((l) => logs.push(l));
  const api = fakeApiServer();
  const reasons: ChangeReason[] = [];
  const { promise: done, resolve } = Promise.withResolvers<void>();
  const w = new KubeWatch({
    server: api.url,
    path: "/apis/networking.k8s.io/v1/ingresses",
    headers: { authorization: "Bearer t0ken" },
    backoffMs: 10,
    random: () => 0.5,
    onChange(objects, reason) {
      reasons.push(reason);
      if (reason === "DELETED") resolve();
      assert.ok(objects.size >= 1);
    },
  }).start();
  try {
    await Promise.race([
      done,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`stuck: ${reasons}`)), 10_000)),
    ]);
    assert.deepEqual(reasons, ["list", "ADDED", "MODIFIED", "list", "DELETED"]);
    assert.deepEqual([...w.objects.keys()], ["ns/a"]);
    assert.equal((w.objects.get("ns/a") as unknown as { v: number }).v, 2);
    assert.equal(w.resourceVersion, "21");
    assert.equal(w.lists, 2);
    const watches = api.requests.filter((r) => r.includes("watch=1"));
    assert.equal(watches.length, 2);
    assert.match(watches[0], /resourceVersion=10&allowWatchBookmarks=true&timeoutSeconds=300/);
    assert.match(watches[1], /resourceVersion=20/);
    assert.ok(
      logs.some((l) => l.includes('"event":"kube_watch_failed"') && l.includes("HTTP 500")),
    );
    assert.ok(logs.some((l) => l.includes('"event":"kube_relist"')));
  } finally {
    await w.stop();
    await api.server.shutdown();
    setLogSink(null);
  }
});

Deno.test("KubeWatch treats a line it cannot read as an error and watches again", async () => {
  setLogSink(() => {});
  let watches = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const u = new URL(req.url);
    if (u.searchParams.get("watch") !== "1") {
      return Response.json({ metadata: { resourceVersion: "1" }, items: [] });
    }
    watches++;
    const body = watches === 1
      ? '{"type":"ADDED","object":{"metadata":{"name":"x"}}}\nnot json\n'
      : watches === 2
      ? '{"type":"SURPRISE","object":{}}\n'
      : '{"type":"ADDED","object":{"metadata":{"name":"y","resourceVersion":"3"}}}\n';
    return new Response(body);
  });
  const seen: string[] = [];
  const w = new KubeWatch({
    server: `http://127.0.0.1:${server.addr.port}`,
    path: "/api/v1/services",
    backoffMs: 5,
    onChange: (objects) => seen.push([...objects.values()].map(objectKey).join(",")),
  }).start();
  try {
    const until = Date.now() + 10_000;
    while (!seen.includes("x,y") && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(seen.slice(0, 2), ["", "x"]);
    assert.ok(seen.includes("x,y"), seen.join(" | "));
    assert.ok(watches >= 3);
  } finally {
    await w.stop();
    await server.shutdown();
    setLogSink(null);
  }
});
