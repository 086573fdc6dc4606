import assert from "node:assert/strict";
import { compileTrusted } from "./trusted_proxies.ts";
import { clientAddress } from "./client_ip.ts";

Deno.test("clientAddress walks X-Forwarded-For only from trusted peers", () => {
  const t = compileTrusted(["127.0.0.1", "10.0.0.0/8"]);
  const h = new Headers({ "x-forwarded-for": "203.0.113.7, 10.0.0.2" });
  assert.equal(clientAddress("127.0.0.1", h, t), "203.0.113.7");
  assert.equal(clientAddress("198.51.100.1", h, t), "198.51.100.1");
  assert.equal(clientAddress("127.0.0.1", new Headers(), t), "127.0.0.1");
  const spoof = new Headers({ "x-forwarded-for": "1.1.1.1, 203.0.113.7" });
  assert.equal(clientAddress("127.0.0.1", spoof, t), "203.0.113.7");
});

Deno.test("clientAddress takes addresses only: ports and brackets dropped, the walk stops at text", () => {
  const t = compileTrusted(["127.0.0.1", "10.0.0.0/8"]);
  const xff = (v: string) => clientAddress("127.0.0.1", new Headers({ "x-forwarded-for": v }), t);
  assert.equal(xff("203.0.113.7:4711"), "203.0.113.7");
  assert.equal(xff("[2001:db8::7]:443, 10.0.0.2"), "2001:db8::7");
  assert.equal(xff("[2001:db8::7]"), "2001:db8::7");
  assert.equal(xff("garbage"), "127.0.0.1");
  assert.equal(xff("203.0.113.7, junk, 10.0.0.2"), "10.0.0.2");
  assert.equal(xff("1.2.3.4:x"), "127.0.0.1");
  assert.equal(xff("[2001:db8::7]:123456"), "127.0.0.1");
  assert.equal(xff("unknown"), "127.0.0.1");
});
