import assert from "node:assert/strict";
import { parsePurge, purgeOfArgs, purgeOfUrl } from "./purge_request.ts";

Deno.test("parsePurge accepts the three shapes", () => {
  assert.deepEqual(parsePurge({ host: "A.example", path: "/x" }), {
    host: "a.example",
    path: "/x",
  });
  assert.deepEqual(parsePurge({ host: "a.example:8080", prefix: "/img/" }), {
    host: "a.example:8080",
    prefix: "/img/",
  });
  assert.deepEqual(parsePurge({ all: true }), { all: true });
});

Deno.test("parsePurge names the field of bad input", () => {
  assert.equal(
    parsePurge(null),
    'body: must be an object: {"host", "path"}, {"host", "prefix"} or {"all": true}',
  );
  assert.equal(
    parsePurge([]),
    'body: must be an object: {"host", "path"}, {"host", "prefix"} or {"all": true}',
  );
  assert.equal(parsePurge({ path: "/x" }), "host: is required");
  assert.equal(parsePurge({ host: 5, path: "/x" }), "host: must be a non-empty string");
  assert.equal(parsePurge({ host: "a b", path: "/x" }), 'host: invalid host "a b"');
  assert.equal(parsePurge({ host: "a", path: "x" }), 'path: must start with "/"');
  assert.equal(parsePurge({ host: "a", prefix: 1 }), 'prefix: must start with "/"');
  assert.equal(parsePurge({ host: "a" }), "path: is required (or prefix)");
  assert.equal(
    parsePurge({ host: "a", path: "/", prefix: "/" }),
    "path: give path or prefix, not both",
  );
  assert.equal(parsePurge({ all: "yes" }), "all: must be true");
  assert.equal(
    parsePurge({ all: true, host: "a" }),
    "all: cannot be combined with host, path or prefix",
  );
  assert.equal(parsePurge({ host: "a", path: "/", x: 1 }), "x: unknown field");
});

Deno.test("purgeOfUrl turns a URL into a purge", () => {
  assert.deepEqual(purgeOfUrl("http://a.example/x?y=1", false), {
    host: "a.example",
    path: "/x?y=1",
  });
  assert.deepEqual(purgeOfUrl("http://a.example/x", false), { host: "a.example", path: "/x" });
  assert.deepEqual(purgeOfUrl("https://a.example:8443/img/", true), {
    host: "a.example:8443",
    prefix: "/img/",
  });
  assert.equal(
    purgeOfUrl("a.example/x", false),
    'invalid URL "a.example/x": expected http://host/path',
  );
});

Deno.test("purgeOfArgs: one URL, --prefix URL, or --all alone; else the usage line", () => {
  assert.deepEqual(purgeOfArgs(["http://a.test/x"], {}), { host: "a.test", path: "/x" });
  assert.deepEqual(purgeOfArgs(["http://a.test/x"], { prefix: true }), {
    host: "a.test",
    prefix: "/x",
  });
  assert.deepEqual(purgeOfArgs([], { all: true }), { all: true });
  const usage = "expected: cache purge URL | cache purge --prefix URL | cache purge --all";
  assert.equal(purgeOfArgs([], {}), usage);
  assert.equal(purgeOfArgs(["http://a.test/x"], { all: true }), usage);
  assert.equal(purgeOfArgs(["http://a.test/x", "http://a.test/y"], {}), usage);
});
