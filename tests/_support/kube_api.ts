/**
 * A fake Kubernetes API server for tests (real HTTP on loopback): lists, chunked watch streams
 * from a resource version (events after it replayed first), and `PATCH` of the `/status`
 * subresource as a JSON merge patch (RFC 7386). Objects get `resourceVersion`,
 * `creationTimestamp` and `generation` (bumped when anything but `status` changes), as the
 * real API server gives them. Bearer token `test-token`. A test can also send a bookmark, end
 * a watch with 410 Gone, and count the lists of a collection.
 */

const enc = new TextEncoder();

// deno-lint-ignore no-explicit-any
type Obj = any;

/** One watched collection: its list path, and whether its objects are namespaced. */
export interface KubeResource {
  readonly path: string;
  readonly namespaced: boolean;
}

/** RFC 7386: objects merge key by key, `null` deletes, anything else replaces. */
export function mergePatch(target: Obj, patch: Obj): Obj {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return patch;
  const out: Obj = typeof target === "object" && target !== null && !Array.isArray(target)
    ? { ...target }
    : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** A running fake API server over the given resources (by kind name). */
export function fakeKubeApi<K extends string>(resources: Record<K, KubeResource>) {
  let rv = 100;
  let clock = Date.parse("2026-01-01T00:00:00Z");
  const items = new Map<string, Map<string, Obj>>();
  const streams = new Map<string, Set<ReadableStreamDefaultController<Uint8Array>>>();
  const history: { rv: number; path: string; ev: unknown }[] = [];
  const statusPatches: string[] = [];
  const lists = new Map<string, number>();
  for (const r of Object.values(resources) as KubeResource[]) {
    items.set(r.path, new Map());
    streams.set(r.path, new Set());
    lists.set(r.path, 0);
  }
  const keyOf = (o: Obj) =>
    o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
  const send = (path: string, ev: unknown) => {
    history.push({ rv, path, ev });
    for (const c of streams.get(path)!) c.enqueue(enc.encode(JSON.stringify(ev) + "\n"));
  };
  /** `/apis/G/V/namespaces/NS/KIND/NAME/status` or `/apis/G/V/KIND/NAME/status`. */
  const statusTarget = (pathname: string): { path: string; key: string } | undefined => {
    for (const r of Object.values(resources) as KubeResource[]) {
      const cut = r.path.lastIndexOf("/");
      const prefix = r.path.slice(0, cut);
      const plural = r.path.slice(cut + 1);
      const m = r.namespaced
        ? new RegExp(`^${prefix}/namespaces/([^/]+)/${plural}/([^/]+)/status$`).exec(pathname)
        : new RegExp(`^${prefix}/${plural}/([^/]+)/status$`).exec(pathname);
      if (m !== null) {
        return { path: r.path, key: r.namespaced ? `${m[1]}/${m[2]}` : m[1] };
      }
    }
    return undefined;
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (req.headers.get("authorization") !== "Bearer test-token") {
      return new Response("", { status: 401 });
    }
    const u = new URL(req.url);
    if (req.method === "PATCH") {
      const t = statusTarget(u.pathname);
      if (t === undefined) return new Response("{}", { status: 404 });
      if (req.headers.get("content-type") !== "application/merge-patch+json") {
        return new Response("{}", { status: 415 });
      }
      const patch = await req.json();
      const o = items.get(t.path)!.get(t.key);
      if (o === undefined) return new Response("{}", { status: 404 });
      statusPatches.push(`${t.path.slice(t.path.lastIndexOf("/") + 1)}/${t.key}`);
      const next = { ...o, status: mergePatch(o.status, patch.status) };
      next.metadata = { ...o.metadata, resourceVersion: String(++rv) };
      items.get(t.path)!.set(t.key, next);
      send(t.path, { type: "MODIFIED", object: next });
      return Response.json(next);
    }
    const set = items.get(u.pathname);
    if (set === undefined) return new Response("{}", { status: 404 });
    if (u.searchParams.get("watch") !== "1") {
      lists.set(u.pathname, lists.get(u.pathname)! + 1);
      return Response.json({ metadata: { resourceVersion: String(rv) }, items: [...set.values()] });
    }
    let ctl!: ReadableStreamDefaultController<Uint8Array>;
    const from = Number(u.searchParams.get("resourceVersion"));
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        ctl = c;
        for (const h of history) {
          if (h.path === u.pathname && h.rv > from) {
            c.enqueue(enc.encode(JSON.stringify(h.ev) + "\n"));
          }
        }
        streams.get(u.pathname)!.add(c);
      },
      cancel() {
        streams.get(u.pathname)!.delete(ctl);
      },
    });
    return new Response(body);
  });
  const pathOf = (k: K) => resources[k].path;
  const api = {
    url: `http://127.0.0.1:${server.addr.port}`,
    /** `kind-plural/key` of every status patch, in order. */
    statusPatches,
    get: (k: K, key: string): Obj => items.get(pathOf(k))!.get(key),
    all: (k: K): Obj[] => [...items.get(pathOf(k))!.values()],
    watching: (k: K) => streams.get(pathOf(k))!.size > 0,
    /** How many times the collection was listed. */
    lists: (k: K) => lists.get(pathOf(k))!,
    /** A BOOKMARK event (a new resource version, no object changed). */
    bookmark(k: K) {
      send(pathOf(k), {
        type: "BOOKMARK",
        object: { metadata: { resourceVersion: String(++rv) } },
      });
    },
    /** A 410 in the middle of the watch streams, as an ERROR event; the streams then end. */
    gone(k: K) {
      send(pathOf(k), {
        type: "ERROR",
        object: { kind: "Status", code: 410, reason: "Expired" },
      });
      for (const c of streams.get(pathOf(k))!) c.close();
      streams.get(pathOf(k))!.clear();
    },
    /**
     * Creates or replaces an object (ADDED or MODIFIED); a replaced object keeps its status,
     * creation time and generation unless its spec changed.
     */
    put(k: K, obj: Obj) {
      const o = structuredClone(obj);
      o.metadata = { ...o.metadata };
      const key = keyOf(o);
      const had = items.get(pathOf(k))!.get(key);
      o.metadata.resourceVersion = String(++rv);
      o.metadata.creationTimestamp = had?.metadata.creationTimestamp ??
        new Date(clock += 1000).toISOString().replace(/\.\d+Z$/, "Z");
      const { status: _s, metadata: _m, ...spec } = o;
      const { status: _hs, metadata: _hm, ...hadSpec } = had ?? {};
      const changed = had === undefined || JSON.stringify(spec) !== JSON.stringify(hadSpec);
      o.metadata.generation = (had?.metadata.generation ?? 0) + (changed ? 1 : 0);
      if (had !== undefined && o.status === undefined && had.status !== undefined) {
        o.status = had.status;
      }
      items.get(pathOf(k))!.set(key, o);
      send(pathOf(k), { type: had ? "MODIFIED" : "ADDED", object: o });
    },
    /** Deletes an object (DELETED); false when there was none. */
    delete(k: K, key: string): boolean {
      const o = items.get(pathOf(k))!.get(key);
      if (o === undefined) return false;
      items.get(pathOf(k))!.delete(key);
      ++rv;
      send(pathOf(k), { type: "DELETED", object: o });
      return true;
    },
    close: async () => {
      for (const s of streams.values()) for (const c of s) c.close();
      await server.shutdown();
    },
  };
  return api;
}

/** A kubeconfig (token `test-token`) for the fake API server at `url`. */
export function kubeconfigFor(url: string): string {
  return `apiVersion: v1
kind: Config
current-context: test
contexts: [{name: test, context: {cluster: fake, user: me}}]
clusters: [{name: fake, cluster: {server: "${url}"}}]
users: [{name: me, user: {token: test-token}}]
`;
}
