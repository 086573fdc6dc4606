import assert from "node:assert/strict";
import { decodeParams, ParamsBuffer } from "../fastcgi/params.ts";
import type { Exchange } from "../pipeline/exchange.ts";
import { buildParams } from "./php_params.ts";

/** The parts of an exchange that the params are built from. */
function exchange(
  url: string,
  headers: Record<string, string>,
  secure = false,
  authority = headers.host ?? "",
): Exchange {
  const req = new Request(url, { method: "POST", headers, body: "a=1" });
  const q = url.indexOf("?");
  return {
    req,
    query: q < 0 ? "" : url.slice(q),
    secure,
    authority,
    client: "203.0.113.7",
    serverPort: 0,
    serverAddr: "",
    remotePort: 0,
    requestId: "0123456789abcdef0123456789abcdef",
  } as unknown as Exchange;
}

const INDEX = {
  script: { kind: "script", filename: "/r/index.php", scriptName: "/index.php", pathInfo: "" },
  root: "/r",
  path: "/",
  contentLength: -1,
  extra: {},
} as const;

function params(ex: Exchange, contentLength = -1): Map<string, string> {
  const out = new ParamsBuffer();
  buildParams(out, ex, { ...INDEX, contentLength });
  return new Map(decodeParams(out.bytes()));
}

Deno.test("buildParams: the CGI/1.1 set, HTTP_* without Proxy or underscores, extras last", () => {
  const out = new ParamsBuffer();
  const ex = exchange("https://shop.test/a%20b/info.php/x/y?q=1&r=%20", {
    host: "shop.test",
    proxy: "http://evil:1",
    "content-type": "application/x-www-form-urlencoded",
    "x-forwarded-for": "1.2.3.4",
    "x-request-id": "spoofed",
    x_bad: "no",
  }, true);
  buildParams(out, ex, {
    script: {
      kind: "script",
      filename: "/srv/www/a b/info.php",
      scriptName: "/a b/info.php",
      pathInfo: "/x/y",
    },
    root: "/srv/www",
    path: "/a b/info.php/x/y",
    contentLength: 3,
    extra: { APP_ENV: "prod", SERVER_NAME: "override" },
  });
  const p = new Map(decodeParams(out.bytes()));
  assert.equal(p.get("SCRIPT_FILENAME"), "/srv/www/a b/info.php");
  assert.equal(p.get("SCRIPT_NAME"), "/a b/info.php");
  assert.equal(p.get("PATH_INFO"), "/x/y");
  assert.equal(p.get("PATH_TRANSLATED"), "/srv/www/x/y");
  assert.equal(p.get("QUERY_STRING"), "q=1&r=%20");
  assert.equal(p.get("REQUEST_URI"), "/a%20b/info.php/x/y?q=1&r=%20");
  assert.equal(p.get("REQUEST_METHOD"), "POST");
  assert.equal(p.get("CONTENT_TYPE"), "application/x-www-form-urlencoded");
  assert.equal(p.get("CONTENT_LENGTH"), "3");
  assert.equal(p.get("HTTPS"), "on");
  assert.equal(p.get("REQUEST_SCHEME"), "https");
  assert.equal(p.get("SERVER_PORT"), "443");
  assert.equal(p.get("REMOTE_ADDR"), "203.0.113.7");
  assert.equal(p.get("HTTP_HOST"), "shop.test");
  assert.equal(p.get("HTTP_X_FORWARDED_FOR"), "1.2.3.4");
  // The request id is scalwsd's (the access log's), not the client's header.
  assert.equal(p.get("HTTP_X_REQUEST_ID"), "0123456789abcdef0123456789abcdef");
  assert.equal(p.get("HTTP_PROXY"), undefined);
  assert.equal(p.get("HTTP_X_BAD"), undefined);
  assert.equal(p.get("HTTP_CONTENT_TYPE"), undefined);
  assert.equal(p.get("APP_ENV"), "prod");
  // Extras are sent last: PHP keeps the last value of a repeated name.
  const pairs = decodeParams(out.bytes());
  assert.deepEqual(pairs.at(-1), ["SERVER_NAME", "override"]);
});

Deno.test("buildParams: no body is an empty CONTENT_LENGTH; SERVER_PORT from the listener, else the Host", () => {
  const out = new ParamsBuffer();
  const ex = exchange("http://[::1]:8080/", { host: "[::1]:8080" });
  buildParams(out, ex, {
    script: { kind: "script", filename: "/r/index.php", scriptName: "/index.php", pathInfo: "" },
    root: "/r",
    path: "/",
    contentLength: -1,
    extra: {},
  });
  const p = new Map(decodeParams(out.bytes()));
  assert.equal(p.get("CONTENT_LENGTH"), "");
  assert.equal(p.get("SERVER_NAME"), "[::1]");
  assert.equal(p.get("SERVER_PORT"), "8080");
  assert.equal(p.get("HTTPS"), undefined);
  assert.equal(p.get("PATH_TRANSLATED"), undefined);

  // The listener's port when the front knows it.
  Object.assign(ex, { serverPort: 18080 });
  buildParams(out, ex, {
    script: { kind: "script", filename: "/r/index.php", scriptName: "/index.php", pathInfo: "" },
    root: "/r",
    path: "/",
    contentLength: -1,
    extra: {},
  });
  assert.equal(new Map(decodeParams(out.bytes())).get("SERVER_PORT"), "18080");
});

Deno.test("buildParams: HTTP_HOST is the absolute-form target's authority, not the Host field", () => {
  // GET http://wiki.test:8080/doku.php with Host: evil.example: routed by wiki.test:8080.
  const p = params(
    exchange("http://wiki.test:8080/", { host: "evil.example" }, false, "wiki.test:8080"),
  );
  assert.equal(p.get("HTTP_HOST"), "wiki.test:8080");
  assert.equal(p.get("SERVER_NAME"), "wiki.test");
  // Once: the Host field is not passed as well.
  const out = new ParamsBuffer();
  buildParams(out, exchange("http://w/", { host: "evil.example" }, false, "wiki.test"), INDEX);
  const hosts = decodeParams(out.bytes()).filter(([k]) => k === "HTTP_HOST");
  assert.deepEqual(hosts, [["HTTP_HOST", "wiki.test"]]);
  // Without any authority (an HTTP/1.0 request with no Host) there is none to pass.
  assert.equal(params(exchange("http://x/", {}, false, "")).get("HTTP_HOST"), undefined);
});

Deno.test("buildParams: REMOTE_PORT, SERVER_ADDR and SERVER_PORT of the connection", () => {
  const ex = exchange("http://a.test/", { host: "a.test:9999" });
  Object.assign(ex, { serverPort: 18080, serverAddr: "127.0.0.1", remotePort: 51234 });
  const p = params(ex);
  assert.equal(p.get("REMOTE_PORT"), "51234");
  assert.equal(p.get("SERVER_ADDR"), "127.0.0.1");
  assert.equal(p.get("SERVER_PORT"), "18080");
  // Unknown (a Unix socket listener): present and empty, as nginx's.
  const unix = params(exchange("http://a.test/", { host: "a.test" }));
  assert.equal(unix.get("REMOTE_PORT"), "");
  assert.equal(unix.get("SERVER_ADDR"), "");
});

Deno.test("buildParams: REQUEST_SCHEME and HTTPS=on over TLS only", () => {
  const tls = params(exchange("https://a.test/", { host: "a.test" }, true));
  assert.equal(tls.get("REQUEST_SCHEME"), "https");
  assert.equal(tls.get("HTTPS"), "on");
  const plain = params(exchange("http://a.test/", { host: "a.test" }));
  assert.equal(plain.get("REQUEST_SCHEME"), "http");
  assert.equal(plain.has("HTTPS"), false);
});

Deno.test("buildParams: CONTENT_LENGTH empty without a body, the length with one (0 included)", () => {
  const ex = exchange("http://a.test/", { host: "a.test" });
  assert.equal(params(ex, -1).get("CONTENT_LENGTH"), "");
  assert.equal(params(ex, 0).get("CONTENT_LENGTH"), "0");
  assert.equal(params(ex, 12).get("CONTENT_LENGTH"), "12");
});

Deno.test("buildParams: SERVER_NAME is the host lower-cased, without its port", () => {
  assert.equal(
    params(exchange("http://x/", { host: "WiKi.Test:8080" })).get("SERVER_NAME"),
    "wiki.test",
  );
  assert.equal(params(exchange("http://x/", { host: "[::1]" })).get("SERVER_NAME"), "[::1]");
  // HTTP_HOST keeps what the client sent.
  assert.equal(params(exchange("http://x/", { host: "WiKi.Test" })).get("HTTP_HOST"), "WiKi.Test");
});
