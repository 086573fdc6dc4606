import assert from "node:assert/strict";
import {
  isLoopbackAddress,
  parseListenAddress,
  parseMemberAddress,
  parseUpstreamUrl,
} from "./address.ts";
import { ValueError } from "./errors.ts";

Deno.test("parseListenAddress reads IPv4, bracketed IPv6 and localhost, port 0..65535", () => {
  assert.deepEqual(parseListenAddress("127.0.0.1:8080"), { hostname: "127.0.0.1", port: 8080 });
  assert.deepEqual(parseListenAddress("[::1]:8080"), { hostname: "::1", port: 8080 });
  assert.deepEqual(parseListenAddress("0.0.0.0:80"), { hostname: "0.0.0.0", port: 80 });
  assert.deepEqual(parseListenAddress("[::]:0"), { hostname: "::", port: 0 });
  assert.deepEqual(parseListenAddress("LOCALHOST:65535"), { hostname: "localhost", port: 65535 });
  assert.deepEqual(parseListenAddress("[2001:DB8::0:1]:443"), {
    hostname: "2001:db8::1",
    port: 443,
  });
});

Deno.test("parseListenAddress refuses host names, missing ports and bad ports", () => {
  const cases: [string, string][] = [
    ["example.com:80", 'invalid address "example.com:80": host must be an IP address or localhost'],
    ["127.0.0.1", 'invalid address "127.0.0.1": port is required'],
    ["127.0.0.1:65536", 'invalid address "127.0.0.1:65536": port must be between 0 and 65535'],
    ["127.0.0.1:http", 'invalid address "127.0.0.1:http": port must be between 0 and 65535'],
    [":8080", 'invalid address ":8080": host is missing'],
    ["::1:8080", 'invalid address "::1:8080": an IPv6 address must be in brackets'],
    ["[::1:8080", 'invalid address "[::1:8080": missing "]"'],
    ["[::1]8080", 'invalid address "[::1]8080"'],
    ["[1.2.3.4]:80", 'invalid address "[1.2.3.4]:80": invalid IPv6 address "1.2.3.4"'],
    ["300.0.0.1:80", 'invalid address "300.0.0.1:80": invalid IPv4 address "300.0.0.1"'],
  ];
  for (const [input, message] of cases) {
    assert.throws(() => parseListenAddress(input), new ValueError(message), input);
  }
});

Deno.test("isLoopbackAddress knows 127.0.0.0/8, ::1 and localhost only", () => {
  assert.equal(isLoopbackAddress({ hostname: "127.0.0.1", port: 1 }), true);
  assert.equal(isLoopbackAddress({ hostname: "127.9.9.9", port: 1 }), true);
  assert.equal(isLoopbackAddress({ hostname: "::1", port: 1 }), true);
  assert.equal(isLoopbackAddress({ hostname: "localhost", port: 1 }), true);
  assert.equal(isLoopbackAddress({ hostname: "0.0.0.0", port: 1 }), false);
  assert.equal(isLoopbackAddress({ hostname: "::", port: 1 }), false);
  assert.equal(isLoopbackAddress({ hostname: "10.0.0.1", port: 1 }), false);
});

Deno.test("parseMemberAddress gives the canonical forms of the spec's table", () => {
  assert.deepEqual(parseMemberAddress("192.0.2.5:8080"), {
    kind: "tcp",
    hostname: "192.0.2.5",
    port: 8080,
    canonical: "192.0.2.5:8080",
  });
  assert.deepEqual(parseMemberAddress("[2001:DB8:0::5]:8080"), {
    kind: "tcp",
    hostname: "2001:db8::5",
    port: 8080,
    canonical: "[2001:db8::5]:8080",
  });
  assert.deepEqual(parseMemberAddress("API-1.Internal:8080"), {
    kind: "tcp",
    hostname: "api-1.internal",
    port: 8080,
    canonical: "api-1.internal:8080",
  });
  assert.deepEqual(parseMemberAddress("unix:/run/api/api.sock"), {
    kind: "unix",
    path: "/run/api/api.sock",
    canonical: "unix:/run/api/api.sock",
  });
  assert.equal(parseMemberAddress("[::FFFF:192.0.2.5]:80").canonical, "[::ffff:192.0.2.5]:80");
  assert.equal(parseMemberAddress("[::ffff:c000:205]:80").canonical, "[::ffff:192.0.2.5]:80");
  assert.equal(parseMemberAddress("my_service:80").canonical, "my_service:80");
  assert.equal(parseMemberAddress("api.internal.:80").canonical, "api.internal.:80");
});

Deno.test("parseMemberAddress refuses schemes, paths, missing ports and bad hosts", () => {
  const cases: [string, string][] = [
    [
      "http://192.0.2.5:8080",
      'invalid address "http://192.0.2.5:8080": a member address has no scheme, write "192.0.2.5:8080"',
    ],
    ["192.0.2.5:8080/x", 'invalid address "192.0.2.5:8080/x": a member address has no path'],
    ["192.0.2.5", 'invalid address "192.0.2.5": port is required'],
    ["[::1]", 'invalid address "[::1]": port is required'],
    ["192.0.2.5:0", 'invalid address "192.0.2.5:0": port must be between 1 and 65535'],
    ["192.0.2.5:", 'invalid address "192.0.2.5:": port must be between 1 and 65535'],
    ["a b:80", 'invalid address "a b:80": invalid host name "a b"'],
    ["-api:80", 'invalid address "-api:80": invalid host name "-api"'],
    ["api..x:80", 'invalid address "api..x:80": invalid host name "api..x"'],
    ["1.2.3:80", 'invalid address "1.2.3:80": invalid IPv4 address "1.2.3"'],
    ["host.123:80", 'invalid address "host.123:80": invalid IPv4 address "host.123"'],
    ["2001:db8::5:80", 'invalid address "2001:db8::5:80": an IPv6 address must be in brackets'],
    ["unix:run/api.sock", 'invalid address "unix:run/api.sock": the socket path must be absolute'],
    [":80", 'invalid address ":80": host is missing'],
  ];
  for (const [input, message] of cases) {
    assert.throws(() => parseMemberAddress(input), new ValueError(message), input);
  }
});

Deno.test("parseUpstreamUrl applies default ports and builds the authority", () => {
  assert.deepEqual(parseUpstreamUrl("http://192.0.2.5:8080"), {
    kind: "address",
    url: "http://192.0.2.5:8080",
    scheme: "http",
    address: { kind: "tcp", hostname: "192.0.2.5", port: 8080, canonical: "192.0.2.5:8080" },
    authority: "192.0.2.5:8080",
  });
  assert.deepEqual(parseUpstreamUrl("https://API.example.com/"), {
    kind: "address",
    url: "https://api.example.com",
    scheme: "https",
    address: {
      kind: "tcp",
      hostname: "api.example.com",
      port: 443,
      canonical: "api.example.com:443",
    },
    authority: "api.example.com",
  });
  const v6 = parseUpstreamUrl("HTTP://[2001:db8::5]:80");
  assert.equal(v6.url, "http://[2001:db8::5]");
  assert.equal(v6.authority, "[2001:db8::5]");
  assert.equal(v6.address.canonical, "[2001:db8::5]:80");
  assert.equal(parseUpstreamUrl("https://h:80").authority, "h:80");
  assert.equal(parseUpstreamUrl("http://h:443").authority, "h:443");
  assert.deepEqual(parseUpstreamUrl("unix:/run/app.sock"), {
    kind: "address",
    url: "unix:/run/app.sock",
    scheme: "http",
    address: { kind: "unix", path: "/run/app.sock", canonical: "unix:/run/app.sock" },
    authority: "localhost",
  });
});

Deno.test("parseUpstreamUrl refuses paths, queries, other schemes and user information", () => {
  const cases: [string, string][] = [
    ["http://h:80/api", 'invalid upstream "http://h:80/api": a path is not allowed'],
    ["http://h?x=1", 'invalid upstream "http://h?x=1": a query or fragment is not allowed'],
    ["http://h#f", 'invalid upstream "http://h#f": a query or fragment is not allowed'],
    [
      "ftp://h",
      'invalid upstream "ftp://h": unsupported scheme "ftp", use http://, https:// or unix:',
    ],
    ["h:80", 'invalid upstream "h:80": must start with http://, https:// or unix:'],
    ["http://u:p@h", 'invalid upstream "http://u:p@h": user information is not allowed'],
    ["http://h:0", 'invalid upstream "http://h:0": port must be between 1 and 65535'],
    ["http://", 'invalid upstream "http://": host is missing'],
    ["http://[::1", 'invalid upstream "http://[::1": missing "]"'],
    ["unix:x.sock", 'invalid upstream "unix:x.sock": the socket path must be absolute'],
  ];
  for (const [input, message] of cases) {
    assert.throws(() => parseUpstreamUrl(input), new ValueError(message), input);
  }
});
