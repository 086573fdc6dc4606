import assert from "node:assert/strict";
import {
  domainError,
  headerValueError,
  hostnameError,
  nameError,
  normaliseRoutePath,
  tokenError,
} from "./syntax.ts";

Deno.test("nameError follows ^[a-z0-9][a-z0-9_-]{0,62}$", () => {
  for (const ok of ["api", "api-stable", "p_default_web_80", "0", "a".repeat(63)]) {
    assert.equal(nameError(ok), undefined, ok);
  }
  for (const bad of ["", "Api", "-api", "_api", "a.b", "a b", "a".repeat(64)]) {
    assert.equal(
      nameError(bad),
      `invalid name "${bad}": use 1 to 63 characters a-z, 0-9, "_" and "-", ` +
        `starting with a letter or digit`,
    );
  }
});

Deno.test("tokenError accepts HTTP tokens only", () => {
  assert.equal(tokenError("SCALWS_AFFINITY"), undefined);
  assert.equal(tokenError("X-Tenant.Id~1"), undefined);
  assert.equal(tokenError("a b"), 'invalid name "a b": must be an HTTP token');
  assert.equal(tokenError("a=b"), 'invalid name "a=b": must be an HTTP token');
  assert.equal(tokenError(""), 'invalid name "": must be an HTTP token');
});

Deno.test("hostnameError checks labels and refuses numeric last labels", () => {
  for (const ok of ["api", "api-1.internal", "my_service", "api.internal."]) {
    assert.equal(hostnameError(ok), undefined, ok);
  }
  assert.equal(hostnameError("a..b"), 'invalid host name "a..b"');
  assert.equal(hostnameError("a-"), 'invalid host name "a-"');
  assert.equal(hostnameError("a".repeat(64)), `invalid host name "${"a".repeat(64)}"`);
  assert.equal(hostnameError("10.1"), 'invalid IPv4 address "10.1"');
});

Deno.test("domainError allows a single leading *. wildcard", () => {
  for (const ok of ["example.com", "*.example.com", "localhost", "xn--bcher-kva.example"]) {
    assert.equal(domainError(ok), undefined, ok);
  }
  assert.equal(
    domainError("a.*.example.com"),
    'invalid domain "a.*.example.com": a wildcard is only allowed as a leading "*."',
  );
  assert.equal(
    domainError("*"),
    'invalid domain "*": a wildcard is only allowed as a leading "*."',
  );
  assert.equal(
    domainError("**.example.com"),
    'invalid domain "**.example.com": a wildcard is only allowed as a leading "*."',
  );
  assert.equal(domainError("example.com:80"), 'invalid domain "example.com:80"');
  assert.equal(domainError("under_score.com"), 'invalid domain "under_score.com"');
  assert.equal(domainError("example.com."), 'invalid domain "example.com."');
});

Deno.test("normaliseRoutePath collapses slashes, drops the trailing one, refuses dot segments", () => {
  assert.deepEqual(normaliseRoutePath("/"), { path: "/" });
  assert.deepEqual(normaliseRoutePath("//"), { path: "/" });
  assert.deepEqual(normaliseRoutePath("/api/"), { path: "/api" });
  assert.deepEqual(normaliseRoutePath("/a//b///c/"), { path: "/a/b/c" });
  assert.deepEqual(normaliseRoutePath("/a.b/..c"), { path: "/a.b/..c" });
  // As requests are normalised: unreserved characters decoded, %2F kept.
  assert.deepEqual(normaliseRoutePath("/%7Euser/%61%2Fb"), { path: "/~user/a%2Fb" });
  assert.deepEqual(normaliseRoutePath("/a/%2e%2e/b"), {
    error: 'invalid path "/a/%2e%2e/b": "." and ".." segments are not allowed',
  });
  assert.deepEqual(normaliseRoutePath("api"), { error: 'invalid path "api": must start with "/"' });
  assert.deepEqual(normaliseRoutePath("/a/../b"), {
    error: 'invalid path "/a/../b": "." and ".." segments are not allowed',
  });
  assert.deepEqual(normaliseRoutePath("/a/./b"), {
    error: 'invalid path "/a/./b": "." and ".." segments are not allowed',
  });
  assert.deepEqual(normaliseRoutePath("/a?b"), {
    error: 'invalid path "/a?b": no spaces, "?" or "#" allowed',
  });
  assert.deepEqual(normaliseRoutePath("/a b"), {
    error: 'invalid path "/a b": no spaces, "?" or "#" allowed',
  });
});

Deno.test("headerValueError refuses CR and LF", () => {
  assert.equal(headerValueError("text/plain; charset=utf-8"), undefined);
  assert.equal(headerValueError("a\tb"), undefined);
  assert.equal(headerValueError("a\r\nb: c"), "invalid header value: control characters");
});
