import assert from "node:assert/strict";
import { request, startScalwsd } from "./_support/mod.ts";
import { configErrors, HOST, oneApp } from "./_support/policies.ts";

Deno.test("allow/deny: CIDRs against the client after trusted_proxies, first match wins, 403", async () => {
  await using s = await startScalwsd(oneApp(
    `{type: respond, body: ok}`,
    `        routes:
          - path: /admin
            policies: [{deny: [10.0.0.5]}, {allow: [10.0.0.0/8, "2001:db8::/32"]}]
          - path: /open
            policies: [{deny: [192.0.2.0/24]}]
          - path: /local
            policies: [{allow: [127.0.0.1]}]`,
    `  trusted_proxies: [127.0.0.1]`,
  ));
  const as = async (path: string, client?: string) => {
    const headers: Record<string, string> = { ...HOST };
    if (client !== undefined) headers["x-forwarded-for"] = client;
    const r = await request(`${s.url}${path}`, { headers });
    return `${r.status} ${r.text.trim()}`;
  };
  assert.equal(await as("/admin", "10.1.2.3"), "200 ok");
  assert.equal(await as("/admin", "10.0.0.5"), "403 Forbidden");
  assert.equal(await as("/admin", "::ffff:10.9.9.9"), "200 ok"); // IPv4-mapped
  assert.equal(await as("/admin", "2001:db8::1"), "200 ok");
  assert.equal(await as("/admin", "192.168.1.1"), "403 Forbidden"); // after allow: the rest is denied
  assert.equal(await as("/open", "192.0.2.9"), "403 Forbidden");
  assert.equal(await as("/open", "198.51.100.1"), "200 ok"); // after deny: the rest is allowed
  assert.equal(await as("/local"), "200 ok"); // the peer itself, no forwarded header
  assert.equal(await as("/local", "203.0.113.7"), "403 Forbidden");
  assert.equal(await as("/elsewhere", "10.0.0.5"), "200 ok");
});

Deno.test("allow/deny: invalid CIDRs are configuration errors", () => {
  const errors = configErrors(
    oneApp(`{type: respond}`, `        policies: [{allow: [10.0.0.0/33, nope]}, {deny: []}]`),
  );
  assert.equal(errors.length, 3);
  assert.match(errors[0], /^tenants\[0\]\.applications\[0\]\.policies\[0\]\.allow\[0\]: /);
  assert.match(errors[1], /^tenants\[0\]\.applications\[0\]\.policies\[0\]\.allow\[1\]: /);
  assert.equal(
    errors[2],
    "tenants[0].applications[0].policies[1].deny: at least one address is required",
  );
});
