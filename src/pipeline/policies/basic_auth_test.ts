import assert from "node:assert/strict";
import { BasicAuth, parseBasic } from "./basic_auth.ts";
import { RateLimiter } from "../rate_limit.ts";
import { testExchange } from "../../../tests/_support/test_exchange.ts";
import { setLogSink } from "../../observe/log.ts";

const HASH = "$2b$04$" + "a".repeat(53);

Deno.test("parseBasic: user and password, UTF-8, refusals", () => {
  assert.deepEqual(parseBasic(`Basic ${btoa("al:pa:ss")}`), { user: "al", password: "pa:ss" });
  assert.deepEqual(parseBasic(`basic ${btoa("a:")}`), { user: "a", password: "" });
  assert.equal(parseBasic("Bearer x"), null);
  assert.equal(parseBasic("Basic !!!"), null);
  assert.equal(parseBasic(`Basic ${btoa("nocolon")}`), null);
});

Deno.test("BasicAuth remembers a verified credential for cache_ttl, by keyed hash only", async () => {
  const logs: string[] = [];
  setLogSink((l) => logs.push(l));
  let now = 0;
  let calls = 0;
  const auth = new BasicAuth(
    {
      policy: "basic_auth",
      realm: "r",
      users_file: "u",
      users: { al: HASH },
      pass_credentials: false,
      cache_ttl: 1000,
    },
    {
      clock: { now: () => now },
      failures: new RateLimiter({ rate: 0.5, burst: 9 }, { now: () => now }),
      verify: (pw) => {
        calls++;
        return Promise.resolve(pw === "good");
      },
    },
  );
  const h = { authorization: `Basic ${btoa("al:good")}` };
  for (let i = 0; i < 3; i++) {
    const ex = testExchange("/", { headers: h });
    assert.equal(await auth.request(ex), null);
    assert.equal(ex.editedHeaders?.get("authorization"), null);
  }
  assert.equal(calls, 1);
  assert.equal(auth.remembered, 1);
  now = 1001;
  assert.equal(await auth.request(testExchange("/", { headers: h })), null);
  assert.equal(calls, 2);
  const bad = await auth.request(
    testExchange("/", { headers: { authorization: `Basic ${btoa("al:bad")}` } }),
  );
  assert.equal((bad as Response).status, 401);
  assert.equal((bad as Response).headers.get("www-authenticate"), 'Basic realm="r"');
  setLogSink(null);
  assert.equal(logs.length, 1);
  assert.match(logs[0], /"basic_auth_failed".*"reason":"wrong password"/);
  assert.ok(!logs[0].includes("bad")); // never the password
});
