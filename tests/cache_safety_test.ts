/**
 * Bad input and safety: lying or broken members are never stored, a client leaving mid-store
 * leaves a whole entry or none, oversized answers stream through, private answers stay private,
 * and unkeyed headers cannot plant an entry for others (the poisoning rule).
 */
import assert from "node:assert/strict";
import {
  adminFetch,
  cachedApp,
  get,
  rawServer,
  readHead,
  respond,
  scalwsYaml,
  scriptedMember,
  sleep,
  startScalwsd,
  tempDir,
  waitUntil,
} from "./_support/mod.ts";

const enc = new TextEncoder();

Deno.test("a member whose body is longer than its Content-Length is never stored", async () => {
  let count = 0;
  await using member = rawServer(async (conn) => {
    await readHead(conn);
    count++;
    await conn.write(enc.encode(
      "HTTP/1.1 200 OK\r\ncache-control: max-age=60\r\ncontent-length: 5\r\n\r\nhello, and more than promised",
    ));
    conn.close();
  });
  await using s = await startScalwsd(cachedApp(member));
  const a = await get(s.url + "/lie", { host: "a.test" });
  assert.equal(a.text, "hello");
  await get(s.url + "/lie", { host: "a.test" });
  assert.equal(count, 2);
  assert.equal(s.server.cache.store.objects, 0);
});

Deno.test("a body cut off before its Content-Length is never stored", async () => {
  let count = 0;
  await using member = rawServer(async (conn) => {
    await readHead(conn);
    count++;
    await conn.write(enc.encode(
      "HTTP/1.1 200 OK\r\ncache-control: max-age=60\r\ncontent-length: 100000\r\n\r\n" +
        "x".repeat(40_000),
    ));
    conn.close();
  });
  await using s = await startScalwsd(cachedApp(member));
  const a = await get(s.url + "/cut", { host: "a.test" });
  assert.ok(a.bytes.length < 100_000);
  await get(s.url + "/cut", { host: "a.test" });
  assert.equal(count, 2);
  assert.equal(s.server.cache.store.objects, 0);
});

Deno.test("a client leaving while its answer is being stored leaves a whole entry or none", async () => {
  const size = 4 * 1024 * 1024;
  await using m = scriptedMember(() => {
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (sent >= size) return c.close();
        await sleep(2);
        const n = Math.min(65536, size - sent);
        c.enqueue(new Uint8Array(n).fill(97 + ((sent / 65536) % 26)));
        sent += n;
      },
    });
    return { body, headers: { "cache-control": "max-age=60", "content-length": String(size) } };
  });
  await using s = await startScalwsd(cachedApp(m));
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(s.url).port) });
  await conn.write(enc.encode("GET /big HTTP/1.1\r\nhost: a.test\r\n\r\n"));
  const buf = new Uint8Array(65536);
  let got = 0;
  while (got < 300_000) got += (await conn.read(buf)) ?? 0;
  conn.close();
  await waitUntil(() => !s.server.cache.collapser.busy("http://a.test/big"), {
    what: "the stored answer settled",
  });
  const v = s.server.cache.store.variants("http://a.test/big");
  assert.ok(v === undefined || v[0].body.length === size, "never half an entry");
  const r = await get(s.url + "/big", { host: "a.test" });
  assert.equal(r.bytes.length, size);
  assert.equal(r.bytes[size - 1], 97 + ((size - 65536) / 65536) % 26);
});

Deno.test("answers over max_object_size stream through and are not stored", async () => {
  await using m = scriptedMember(() => ({
    body: "y".repeat(200_000),
    headers: { "cache-control": "max-age=60" },
  }));
  await using s = await startScalwsd(cachedApp(m, { max_object_size: "100KiB" }));
  const a = await get(s.url + "/large", { host: "a.test" });
  assert.equal(a.bytes.length, 200_000);
  const b = await get(s.url + "/large", { host: "a.test" });
  assert.equal(b.bytes.length, 200_000);
  assert.equal(m.count, 2);
  assert.equal(s.server.cache.store.objects, 0);
});

Deno.test("a private answer is never served to a second client", async () => {
  await using m = scriptedMember((req) => ({
    body: `account of ${req.headers.get("cookie")}`,
    headers: { "cache-control": "private, max-age=600" },
  }));
  await using s = await startScalwsd(cachedApp(m));
  const alice = await get(s.url + "/me", { host: "a.test", cookie: "user=alice" });
  const bob = await get(s.url + "/me", { host: "a.test", cookie: "user=bob" });
  assert.equal(alice.text, "account of user=alice");
  assert.equal(bob.text, "account of user=bob");
  assert.equal(m.count, 2);
});

Deno.test("poisoning: unkeyed headers a member reflects cannot plant an entry for others", async () => {
  // The member builds links from the forwarding headers, as many frameworks do.
  await using m = scriptedMember((req) => {
    const h = req.headers;
    const host = h.get("x-forwarded-host") ?? h.get("host");
    const scheme = h.get("x-forwarded-scheme") ?? h.get("x-forwarded-proto") ?? "http";
    const path = h.get("x-original-url") ?? new URL(req.url).pathname;
    return {
      body: `<a href="${scheme}://${host}${path}">`,
      headers: { "cache-control": "max-age=600" },
    };
  });
  await using s = await startScalwsd(cachedApp(m));
  // X-Forwarded-Host from an untrusted peer is replaced by scalwsd: stored, but clean.
  const evilHost = await get(s.url + "/p1", { host: "a.test", "x-forwarded-host": "evil.example" });
  assert.equal(evilHost.text, '<a href="http://a.test/p1">');
  // Headers scalwsd passes on untouched and does not key on: the answer is not stored.
  for (
    const [name, value] of [
      ["x-forwarded-scheme", "javascript"],
      ["x-original-url", "/evil"],
      ["forwarded", "host=evil.example"],
    ]
  ) {
    const path = `/p-${name}`;
    const planted = await get(s.url + path, { host: "a.test", [name]: value });
    assert.match(planted.headers.get("cache-status")!, /fwd=uri-miss; fwd-status=200$/, name);
    const victim = await get(s.url + path, { host: "a.test" });
    assert.ok(!victim.text.includes("evil") && !victim.text.includes("javascript"), name);
  }
  const victim = await get(s.url + "/p1", { host: "a.test" });
  assert.equal(victim.text, '<a href="http://a.test/p1">');
});

Deno.test("a handler's whole body over max_object_size is answered in full and not stored", async () => {
  await using s = await startScalwsd(
    scalwsYaml({
      apps: [{
        name: "a",
        domains: ["a.test"],
        runtime: respond("z".repeat(3000), { headers: { "cache-control": "max-age=60" } }),
        cache: { max_object_size: "1KiB" },
        routes: [{
          path: "/small",
          runtime: respond("small", { headers: { "cache-control": "max-age=60" } }),
        }],
      }],
    }),
  );
  const big = await get(s.url + "/big", { host: "a.test" });
  assert.equal(big.text, "z".repeat(3000));
  assert.equal(big.headers.get("cache-status"), "scalwsd; fwd=uri-miss; fwd-status=200");
  assert.equal(s.server.cache.store.objects, 0);
  await get(s.url + "/small", { host: "a.test" });
  const small = await get(s.url + "/small", { host: "a.test" });
  assert.equal(small.text, "small");
  assert.match(small.headers.get("cache-status")!, /^scalwsd; hit/);
});

Deno.test("the key is the client's URL: routes that rewrite to one member path keep their entries apart", async () => {
  await using m = scriptedMember((req) => ({
    body: `member ${new URL(req.url).pathname}`,
    headers: { "cache-control": "max-age=600" },
  }));
  await using s = await startScalwsd(cachedApp(m, {}, {
    app: {
      routes: [
        // Both routes send /x to the member; the root route answers itself.
        { path: "/api", policies: [{ rewrite: { strip_prefix: "/api" } }] },
        { path: "/v2", policies: [{ rewrite: { prefix: { from: "/v2", to: "/" } } }] },
        {
          path: "/x",
          runtime: {
            type: "respond",
            body: "scalwsd's own /x",
            headers: { "cache-control": "max-age=600" },
          },
        },
      ],
    },
  }));
  const h = { host: "a.test" };
  assert.equal((await get(s.url + "/api/x", h)).text, "member /x");
  const own = await get(s.url + "/x", h);
  assert.equal(own.text, "scalwsd's own /x");
  assert.match(own.headers.get("cache-status")!, /fwd=uri-miss/);
  const v2 = await get(s.url + "/v2/x", h);
  assert.equal(v2.text, "member /x");
  assert.match(v2.headers.get("cache-status")!, /fwd=uri-miss/);
  assert.equal(m.count, 2);
  for (const [path, text] of [["/api/x", "member /x"], ["/x", "scalwsd's own /x"]]) {
    const hit = await get(s.url + path, h);
    assert.equal(hit.text, text, path);
    assert.match(hit.headers.get("cache-status")!, /hit/, path);
  }
  // A purge names the URL clients ask for.
  const r = await adminFetch(s.adminSocket, "/v1/cache/purge", {
    method: "POST",
    body: JSON.stringify({ host: "a.test", path: "/api/x" }),
  });
  assert.deepEqual(await r.json(), { purged: 1 });
  assert.match((await get(s.url + "/api/x", h)).headers.get("cache-status")!, /fwd=uri-miss/);
  assert.equal(m.count, 3);
});

Deno.test("routes told apart by headers or the query share URLs, each with its own entries (memory and disk)", async () => {
  for (const disk of [false, true]) {
    await using dir = await tempDir();
    await using m = scriptedMember((req) => ({
      body: `member ${new URL(req.url).pathname}`,
      headers: { "cache-control": "max-age=600" },
    }));
    const own = (body: string) => ({
      type: "respond",
      body,
      headers: { "cache-control": "max-age=600" },
    });
    await using s = await startScalwsd(cachedApp(m, {}, {
      server: disk ? { cache: { path: `${dir.path}/cache` } } : undefined,
      app: {
        routes: [
          { path: "/c", headers: { "X-Version": "2" }, runtime: own("version 2") },
          { path: "/c", runtime: own("plain") },
          { path: "/q", query: { beta: "1" }, cache: { ignore_query: true }, runtime: own("beta") },
          { path: "/q", cache: { ignore_query: true } },
        ],
      },
    }));
    const v2 = { host: "a.test", "x-version": "2" };
    const plain = { host: "a.test" };
    const texts = async (steps: [string, Record<string, string>][]) => {
      const out: string[] = [];
      for (const [path, h] of steps) out.push((await get(s.url + path, h)).text);
      return out;
    };
    const what = disk ? "disk" : "memory";
    assert.deepEqual(
      await texts([["/c", v2], ["/c", plain], ["/c", v2], ["/c", plain]]),
      ["version 2", "plain", "version 2", "plain"],
      what,
    );
    assert.deepEqual(await texts([["/c/x", v2], ["/c/x", plain]]), ["version 2", "plain"], what);
    // ignore_query: /q?beta=1 and /q?beta=2 are one key, and two routes.
    assert.deepEqual(
      await texts([["/q?beta=1", plain], ["/q?beta=2", plain], ["/q?beta=1", plain]]),
      ["beta", "member /q", "beta"],
      what,
    );
    const hit = await get(s.url + "/c", v2);
    assert.match(hit.headers.get("cache-status")!, /hit/, what);
    // A purge of the URL removes every route's entry.
    const r = await adminFetch(s.adminSocket, "/v1/cache/purge", {
      method: "POST",
      body: JSON.stringify({ host: "a.test", path: "/c" }),
    });
    assert.ok((await r.json()).purged >= 2, what);
    assert.match((await get(s.url + "/c", v2)).headers.get("cache-status")!, /fwd=uri-miss/);
  }
});
