import assert from "node:assert/strict";
import { startFakeDns } from "./_dns_test_server.ts";
import { DnsQueryError, nameServerFrom, queryDns } from "./dns_client.ts";
import { DNS_TYPE, RCODE } from "./dns_message.ts";

Deno.test("queryDns asks over UDP and returns the records with their TTLs", async () => {
  await using dns = startFakeDns();
  dns.set("api.test", "A", {
    records: [{ name: "api.test", type: 1, ttl: 42, address: "127.0.0.7" }],
  });
  const server = { hostname: "127.0.0.1", port: dns.port };
  const r = await queryDns({ server, name: "api.test", type: DNS_TYPE.A });
  assert.equal(r.rcode, RCODE.NOERROR);
  assert.deepEqual(r.answers, [{ name: "api.test", type: 1, ttl: 42, address: "127.0.0.7" }]);
  const nx = await queryDns({ server, name: "gone.test", type: DNS_TYPE.A });
  assert.equal(nx.rcode, RCODE.NXDOMAIN);
  assert.deepEqual(dns.queries.map((q) => q.tcp), [false, false]);
});

Deno.test("queryDns asks again over TCP when the UDP answer is truncated", async () => {
  await using dns = startFakeDns();
  const records = Array.from({ length: 40 }, (_, i) => ({
    name: "big.test",
    type: 1 as const,
    ttl: 5,
    address: `127.0.1.${i}`,
  }));
  dns.set("big.test", "A", { records, truncate: true });
  const r = await queryDns({
    server: { hostname: "127.0.0.1", port: dns.port },
    name: "big.test",
    type: DNS_TYPE.A,
  });
  assert.equal(r.answers.length, 40);
  assert.deepEqual(dns.queries.map((q) => q.tcp), [false, true]);
});

Deno.test("queryDns gives up with DnsQueryError after its tries when nothing answers", async () => {
  await using dns = startFakeDns();
  dns.set("slow.test", "A", { drop: true });
  const started = Date.now();
  await assert.rejects(
    queryDns({
      server: { hostname: "127.0.0.1", port: dns.port },
      name: "slow.test",
      type: DNS_TYPE.A,
      timeoutMs: 100,
      tries: 2,
    }),
    (err: unknown) => err instanceof DnsQueryError && /no answer within 100 ms/.test(err.message),
  );
  assert.equal(dns.queries.length, 2);
  assert.ok(Date.now() - started >= 190);
});

Deno.test("nameServerFrom takes the first nameserver of resolv.conf", () => {
  assert.deepEqual(nameServerFrom("# x\nsearch a\nnameserver 10.0.0.2\nnameserver 1.1.1.1\n"), {
    hostname: "10.0.0.2",
    port: 53,
  });
  assert.deepEqual(nameServerFrom(""), { hostname: "127.0.0.1", port: 53 });
});
