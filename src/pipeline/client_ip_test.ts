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
