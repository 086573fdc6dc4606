import assert from "node:assert/strict";
import { request, startScalwsd } from "./_support/mod.ts";
import { phpFpmBinary, startPhpFpm } from "./_support/php_fpm.ts";
import { configErrors, type Echo, echoMember, HOST, oneApp } from "./_support/policies.ts";

Deno.test("rewrite: strip_prefix, prefix and regex change the path the member gets, once", async () => {
  await using m = echoMember();
  await using s = await startScalwsd(oneApp(
    `{type: proxy, upstream: "http://${m.address}"}`,
    `        routes:
          - path: /api
            policies: [{rewrite: {strip_prefix: /api}}]
          - path: /old
            policies: [{rewrite: {prefix: {from: /old, to: /new}}}]
          - path: /u
            policies: [{rewrite: {regex: {match: "^/u/([0-9]+)$", to: "/users/$1"}}}]
          - path: /climb
            policies: [{rewrite: {regex: {match: "^/climb/(.*)$", to: "/base/$1"}}}]
          - path: /loop
            policies: [{rewrite: {prefix: {from: /loop, to: /api}}}]`,
  ));
  const path = async (p: string) => {
    const r = await request(`${s.url}${p}`, { headers: HOST });
    assert.equal(r.status, 200, p);
    return (JSON.parse(r.text) as Echo).path;
  };
  assert.equal(await path("/api/items?x=1"), "/items?x=1");
  assert.equal(await path("/api"), "/");
  assert.equal(await path("/apix"), "/apix");
  assert.equal(await path("/old/a/b"), "/new/a/b");
  assert.equal(await path("/u/42?q"), "/users/42?q");
  assert.equal(await path("/u/abc"), "/u/abc");
  // The rewritten path is normalised again and never climbs above "/".
  assert.equal(await path("/climb/..%2f..%2f..%2fetc"), "/base/..%2f..%2f..%2fetc");
  assert.equal(await path("/climb/x/%2e%2e/%2e%2e/%2e%2e/etc"), "/etc");
  // A rewrite is applied once: /loop -> /api is not stripped again by the /api route.
  assert.equal(await path("/loop/z"), "/api/z");
  // A regex rewrite is not run on a path over 1 KiB.
  const long = await request(`${s.url}/u/${"1".repeat(1100)}`, { headers: HOST });
  assert.equal(long.status, 414);
});

Deno.test("rewrite: unsafe patterns and no-op rewrites are configuration errors", () => {
  const yaml = oneApp(
    `{type: respond}`,
    `        policies:
          - {rewrite: {regex: {match: "^(a+)+$", to: "/x"}}}
          - {rewrite: {regex: {match: "^/(a)\\\\1$", to: "/x"}}}
          - {rewrite: {regex: {match: "^/(?=a)", to: "/x"}}}
          - {rewrite: {regex: {match: "^/u/([0-9]+)$", to: "/users/$2"}}}
          - {rewrite: {prefix: {from: /a, to: /a}}}
          - {rewrite: {strip_prefix: /a, prefix: {from: /b, to: /c}}}
          - {rewrite: {regex: {match: "^/s/(.*)$", to: "/x y/$1"}}}
          - {rewrite: {regex: {match: "^/f/(.*)$", to: "/x#top/$1"}}}`,
  );
  const errors = configErrors(yaml);
  const P = "tenants[0].applications[0].policies";
  assert.deepEqual(errors, [
    `${P}[0].rewrite.regex.match: pattern refused: a repeated group may not contain a quantifier or an alternation (nested repeats can backtrack catastrophically)`,
    `${P}[1].rewrite.regex.match: pattern refused: backreferences are not supported`,
    `${P}[2].rewrite.regex.match: pattern refused: lookaround and other (?...) groups are not supported`,
    `${P}[3].rewrite.regex.to: $2 names no group; the pattern has 1 capture group`,
    `${P}[4].rewrite.prefix: from and to are the same ("/a")`,
    `${P}[5].rewrite: exactly one of strip_prefix, prefix and regex is required`,
    // The target goes to the member as it is: a space broke the request line (400), a "#" cut it.
    `${P}[6].rewrite.regex.to: " " is not allowed in a request target; percent-encode it (a space is %20)`,
    `${P}[7].rewrite.regex.to: "#" is not allowed in a request target; percent-encode it (a space is %20)`,
  ]);
});

Deno.test({
  name: "rewrite: a regex target with ? sets the query for proxy, static and PHP alike",
  ignore: phpFpmBinary() === null,
  async fn() {
    await using m = echoMember();
    await using fpm = await startPhpFpm();
    const root = await Deno.makeTempDir({ prefix: "scalwsd-rewrite-" });
    try {
      await Deno.writeTextFile(
        `${root}/doku.php`,
        `<?php echo json_encode(['qs' => $_SERVER['QUERY_STRING'], 'get' => $_GET, ` +
          `'uri' => $_SERVER['REQUEST_URI'], 'script' => $_SERVER['SCRIPT_NAME']]);`,
      );
      await Deno.writeTextFile(`${root}/page.txt`, "a page");
      const wiki = (to: string) => `[{rewrite: {regex: {match: "^/wiki/(.*)$", to: "${to}"}}}]`;
      await using s = await startScalwsd(oneApp(
        `{type: proxy, upstream: "http://${m.address}"}`,
        `        routes:
          - path: /wiki
            policies: ${wiki("/doku.php?id=$1")}
          - path: /wiki/only
            policies: ${wiki("/doku.php?id=$1?")}
          - path: /files
            runtime: {type: static, root: ${root}}
            policies: [{rewrite: {regex: {match: "^/files/(.*)$", to: "/$1.txt?v=2"}}}]
          - path: /php
            runtime: {type: php, fastcgi: "${fpm.address}", root: ${root}}
            policies: [{rewrite: {regex: {match: "^/php/(.*)$", to: "/doku.php?id=$1"}}}]`,
      ));
      const get = (p: string) => request(`${s.url}${p}`, { headers: HOST });
      const proxied = async (p: string) => (JSON.parse((await get(p)).text) as Echo).path;
      assert.equal(await proxied("/wiki/start?do=edit"), "/doku.php?id=start&do=edit");
      assert.equal(await proxied("/wiki/start"), "/doku.php?id=start");
      assert.equal(await proxied("/wiki/only/x?do=edit"), "/doku.php?id=only/x");
      const file = await get("/files/page?x=1");
      assert.equal(`${file.status} ${file.text}`, "200 a page");
      const php = await get("/php/start?do=edit");
      assert.equal(php.status, 200);
      assert.deepEqual(JSON.parse(php.text), {
        qs: "id=start&do=edit",
        get: { id: "start", do: "edit" },
        uri: "/php/start?do=edit",
        script: "/doku.php",
      });
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test("rewrite: the access log names the path the client asked for, not the rewritten one", async () => {
  await using m = echoMember();
  const dir = await Deno.makeTempDir();
  const logFile = `${dir}/access.log`;
  try {
    {
      await using s = await startScalwsd(
        oneApp(
          `{type: proxy, upstream: "http://${m.address}"}`,
          `        routes:
          - path: /api
            policies: [{rewrite: {strip_prefix: /api}}]`,
        ),
        { accessLog: logFile },
      );
      const r = await request(`${s.url}/api/items?x=1`, { headers: HOST });
      assert.equal((JSON.parse(r.text) as Echo).path, "/items?x=1");
    }
    const line = JSON.parse((await Deno.readTextFile(logFile)).trim().split("\n").at(-1)!);
    assert.equal(line.path, "/api/items");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
