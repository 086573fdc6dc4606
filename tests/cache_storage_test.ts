/**
 * What the cache stores: explicit freshness only, and never what RFC 9111 keeps a shared cache
 * from storing. Each case asks twice and counts what reached the member.
 */
import assert from "node:assert/strict";
import { cachedApp, get, request, scriptedMember, startScalwsd } from "./_support/mod.ts";

const DATE = new Date().toUTCString();
const LATER = new Date(Date.now() + 120_000).toUTCString();
/** A member clock 240 s fast: its Expires (120 s ahead of ours) is already past its Date. */
const FAST_DATE = new Date(Date.now() + 240_000).toUTCString();

/** Path -> the member's answer headers (and status). */
const CASES: Record<string, { headers: Record<string, string>; status?: number }> = {
  "/max-age": { headers: { "cache-control": "max-age=60" } },
  "/s-maxage": { headers: { "cache-control": "s-maxage=60, max-age=0" } },
  "/expires": { headers: { expires: LATER, date: DATE } },
  "/expires-before-date": { headers: { expires: LATER, date: FAST_DATE } },
  "/heuristic": { headers: { "last-modified": "Thu, 01 Jan 2026 00:00:00 GMT" } },
  "/public-only": { headers: { "cache-control": "public" } },
  "/no-store": { headers: { "cache-control": "no-store, max-age=60" } },
  "/private": { headers: { "cache-control": "private, max-age=60" } },
  "/private-field": { headers: { "cache-control": 'private="x-user", max-age=60' } },
  "/cookie": { headers: { "cache-control": "max-age=60", "set-cookie": "s=1" } },
  "/vary-star": { headers: { "cache-control": "max-age=60", vary: "*" } },
  "/partial": {
    status: 206,
    headers: { "cache-control": "max-age=60", "content-range": "bytes 0-1/10" },
  },
  "/server-error": { status: 500, headers: { "cache-control": "max-age=60" } },
  "/not-found": { status: 404, headers: { "cache-control": "max-age=60" } },
  "/bad-cc": { headers: { "cache-control": "max-age=sixty" } },
};

Deno.test("the cache stores answers with explicit or heuristic freshness and nothing RFC 9111 forbids", async () => {
  const counts = new Map<string, number>();
  await using m = scriptedMember((req) => {
    const path = new URL(req.url).pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const c = CASES[path] ?? { headers: {} };
    return { body: "body of " + path, status: c.status, headers: c.headers };
  });
  await using s = await startScalwsd(cachedApp(m));
  for (const path of Object.keys(CASES)) {
    await get(s.url + path, { host: "a.test" });
    await get(s.url + path, { host: "a.test" });
  }
  const stored = Object.keys(CASES).filter((p) => counts.get(p) === 1);
  // /heuristic: Last-Modified only, fresh for 10% of its age (RFC 9111 4.2.2, on by default).
  // /server-error: any final status with explicit freshness (RFC 9111 3).
  assert.deepEqual(stored, [
    "/max-age",
    "/s-maxage",
    "/expires",
    "/heuristic",
    "/server-error",
    "/not-found",
  ]);
  for (const p of Object.keys(CASES)) assert.ok((counts.get(p) ?? 0) >= 1, p);
});

Deno.test("requests with no-store or Authorization are not stored unless the answer allows", async () => {
  const counts = new Map<string, number>();
  await using m = scriptedMember((req) => {
    const path = new URL(req.url).pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const cc = path === "/auth-public"
      ? "public, max-age=60"
      : path === "/auth-smaxage"
      ? "s-maxage=60"
      : path === "/auth-mustrevalidate"
      ? "must-revalidate, max-age=60"
      : "max-age=60";
    return {
      body: "for " + (req.headers.get("authorization") ?? "anyone"),
      headers: { "cache-control": cc },
    };
  });
  await using s = await startScalwsd(cachedApp(m));
  await get(s.url + "/req-no-store", { host: "a.test", "cache-control": "no-store" });
  await get(s.url + "/req-no-store", { host: "a.test" });
  assert.equal(counts.get("/req-no-store"), 2);

  const alice = { host: "a.test", authorization: "Bearer alice" };
  const r1 = await get(s.url + "/auth", alice);
  assert.equal(r1.text, "for Bearer alice");
  const r2 = await get(s.url + "/auth", { host: "a.test" });
  assert.equal(r2.text, "for anyone");
  for (const p of ["/auth-public", "/auth-smaxage", "/auth-mustrevalidate"]) {
    await get(s.url + p, alice);
    const again = await get(s.url + p, { host: "a.test", authorization: "Bearer bob" });
    assert.match(again.headers.get("cache-status") ?? "", /hit/, p);
    assert.equal(counts.get(p), 1, p);
  }
});

Deno.test("Set-Cookie answers are stored only with store_set_cookie, with the cookie only when keep", async () => {
  await using m = scriptedMember((_req, n) => ({
    body: "x",
    headers: { "cache-control": "max-age=60", "set-cookie": `session=${n}` },
  }));
  {
    await using s = await startScalwsd(cachedApp(m));
    const a = await get(s.url + "/c", { host: "a.test" });
    const b = await get(s.url + "/c", { host: "a.test" });
    assert.equal(a.headers.get("set-cookie"), "session=1");
    assert.equal(b.headers.get("set-cookie"), "session=2");
  }
  {
    await using s = await startScalwsd(cachedApp(m, { store_set_cookie: true }));
    const a = await get(s.url + "/c", { host: "a.test" });
    const b = await get(s.url + "/c", { host: "a.test" });
    assert.equal(a.headers.get("set-cookie"), "session=3");
    assert.match(b.headers.get("cache-status") ?? "", /^scalwsd; hit/);
    assert.equal(b.headers.get("set-cookie"), null);
    assert.equal(m.count, 3);
  }
  {
    // keep: stored with the cookie, which every hit carries (RFC 9111 7.3).
    await using s = await startScalwsd(cachedApp(m, { store_set_cookie: "keep" }));
    const a = await get(s.url + "/k", { host: "a.test" });
    const b = await get(s.url + "/k", { host: "a.test" });
    assert.equal(a.headers.get("set-cookie"), "session=4");
    assert.match(b.headers.get("cache-status") ?? "", /^scalwsd; hit/);
    assert.equal(b.headers.get("set-cookie"), "session=4");
    assert.equal(m.count, 4);
  }
});

Deno.test("only GET is stored: POST, PUT and HEAD misses are passed on", async () => {
  await using m = scriptedMember(() => ({ body: "x", headers: { "cache-control": "max-age=60" } }));
  await using s = await startScalwsd(cachedApp(m));
  await request(s.url + "/p", { method: "POST", headers: { host: "a.test" }, body: "1" });
  const head = await request(s.url + "/p", { method: "HEAD", headers: { host: "a.test" } });
  assert.equal(head.status, 200);
  const r = await get(s.url + "/p", { host: "a.test" });
  assert.match(r.headers.get("cache-status") ?? "", /fwd=uri-miss; fwd-status=200; stored; ttl=60/);
  assert.equal(m.count, 3);
  // HEAD is answered from the stored GET, with its length and no body.
  const head2 = await request(s.url + "/p", { method: "HEAD", headers: { host: "a.test" } });
  assert.equal(head2.headers.get("content-length"), "1");
  assert.equal(head2.text, "");
  assert.match(head2.headers.get("cache-status") ?? "", /^scalwsd; hit/);
  assert.equal(m.count, 3);
});

Deno.test("CDN-Cache-Control (RFC 9213) replaces Cache-Control and Expires when valid, and is kept", async () => {
  await using m = scriptedMember((req) => {
    const p = new URL(req.url).pathname;
    if (p === "/cdn") {
      return {
        body: "a",
        headers: { "cache-control": "no-store", "cdn-cache-control": "max-age=60" },
      };
    }
    if (p === "/cdn-no-store") {
      return {
        body: "b",
        headers: { "cache-control": "max-age=60", "cdn-cache-control": "no-store" },
      };
    }
    // Invalid targeted field: Cache-Control applies.
    return {
      body: "c",
      headers: { "cache-control": "max-age=60", "cdn-cache-control": "max-age=6 0" },
    };
  });
  await using s = await startScalwsd(cachedApp(m));
  for (const p of ["/cdn", "/cdn-no-store", "/invalid"]) {
    await get(s.url + p, { host: "a.test" });
  }
  const hit = await get(s.url + "/cdn", { host: "a.test" });
  assert.equal(hit.headers.get("cache-status"), "scalwsd; hit; ttl=60");
  assert.equal(hit.headers.get("cdn-cache-control"), "max-age=60");
  assert.equal(hit.headers.get("cache-control"), "no-store");
  const miss = await get(s.url + "/cdn-no-store", { host: "a.test" });
  assert.match(miss.headers.get("cache-status")!, /fwd=uri-miss/);
  const inv = await get(s.url + "/invalid", { host: "a.test" });
  assert.match(inv.headers.get("cache-status")!, /^scalwsd; hit/);
  assert.equal(m.count, 4);
});

Deno.test("cache.targeted_field names another targeted field; CDN-Cache-Control is then ignored", async () => {
  await using m = scriptedMember(() => ({
    body: "a",
    headers: { "cdn-cache-control": "no-store", "fastly-cache-control": "max-age=30" },
  }));
  await using s = await startScalwsd(cachedApp(m, { targeted_field: "Fastly-Cache-Control" }));
  await get(s.url + "/f", { host: "a.test" });
  const hit = await get(s.url + "/f", { host: "a.test" });
  assert.equal(hit.headers.get("cache-status"), "scalwsd; hit; ttl=30");
  assert.equal(m.count, 1);
});

Deno.test("heuristic freshness: 10% since Last-Modified, at most server.cache.heuristic_max (1d by default), off with 0s", async () => {
  const old = new Date(Date.now() - 100 * 86_400_000).toUTCString(); // 10%: 10 days
  const recent = new Date(Date.now() - 200_000).toUTCString(); // 10%: 20 s
  await using m = scriptedMember((req) => {
    const path = new URL(req.url).pathname;
    const status = path.startsWith("/gone") ? 410 : path.startsWith("/error") ? 500 : 200;
    return {
      body: path,
      status,
      headers: { "last-modified": path.endsWith("-new") ? recent : old },
    };
  });
  const ttlOf = async (s: { url: string }, path: string) => {
    const first = await get(s.url + path, { host: "a.test" });
    const again = await get(s.url + path, { host: "a.test" });
    const stored = /; hit; ttl=(\d+)$/.exec(again.headers.get("cache-status") ?? "");
    return first.headers.get("cache-status")?.includes("stored") && stored !== null
      ? Number(stored[1])
      : "not stored";
  };
  {
    await using s = await startScalwsd(cachedApp(m));
    assert.equal(await ttlOf(s, "/a"), 86_400);
    assert.equal(await ttlOf(s, "/gone"), 86_400); // 410: heuristically cacheable
    assert.ok([19, 20].includes(await ttlOf(s, "/a-new") as number));
    assert.equal(await ttlOf(s, "/error"), "not stored"); // 500: explicit freshness only
  }
  {
    await using s = await startScalwsd(
      cachedApp(m, {}, { server: { cache: { heuristic_max: "5s" } } }),
    );
    assert.equal(await ttlOf(s, "/a"), 5);
  }
  {
    await using s = await startScalwsd(
      cachedApp(m, {}, { server: { cache: { heuristic_max: "0s" } } }),
    );
    assert.equal(await ttlOf(s, "/a"), "not stored");
    assert.equal(await ttlOf(s, "/gone"), "not stored");
  }
});

Deno.test("an Authorization that basic_auth checked and removed never reached the member: the answer is stored", async () => {
  const dir = await Deno.makeTempDir();
  // alice:secret (bcrypt, cost 4).
  const hash = "$2y$04$L1GvW2z1f4ZBsKfl4oRQ9O3cwTGGQ0lBNvryeTH39nqoue371O2My";
  await Deno.writeTextFile(`${dir}/users`, `alice:${hash}\n`);
  const seen: (string | null)[] = [];
  await using m = scriptedMember((req) => {
    seen.push(req.headers.get("authorization"));
    return { body: "members' area", headers: { "cache-control": "max-age=60" } };
  });
  await using s = await startScalwsd(cachedApp(m, {}, {
    app: {
      routes: [
        { path: "/in", policies: [{ basic_auth: { users_file: `${dir}/users` } }] },
        {
          path: "/pass",
          policies: [{ basic_auth: { users_file: `${dir}/users`, pass_credentials: true } }],
        },
      ],
    },
  }));
  const alice = { host: "a.test", authorization: `Basic ${btoa("alice:secret")}` };
  try {
    for (const path of ["/in", "/in", "/pass", "/pass"]) {
      const r = await get(s.url + path, alice);
      assert.equal(r.status, 200, path);
    }
    assert.equal((await get(s.url + "/in", { host: "a.test" })).status, 401);
    const hit = await get(s.url + "/in", alice);
    assert.match(hit.headers.get("cache-status")!, /hit/);
    // /in: stored once; /pass: the member got the credentials, so not stored (twice).
    assert.deepEqual(seen, [null, alice.authorization, alice.authorization]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
