import assert from "node:assert/strict";
import { AcmeClient } from "./client.ts";
import { Http01Challenges } from "./http01.ts";
import { generateAccountKey } from "./jws.ts";
import type { Fetch } from "./nonce.ts";
import { orderCertificate, OrderFailed } from "./order_flow.ts";

const CA = "https://ca.test";

/** A scripted CA: `authz` and `order` give the JSON of each poll; requests are recorded. */
function fakeCa(script: { authz: () => unknown; order?: () => unknown }) {
  const posts: string[] = [];
  const json = (v: unknown, status = 200, extra: Record<string, string> = {}) =>
    new Response(JSON.stringify(v), {
      status,
      headers: { "replay-nonce": `n${posts.length}`, ...extra },
    });
  const order = (status: string) => ({
    status,
    authorizations: [`${CA}/authz/1`],
    finalize: `${CA}/finalize/1`,
  });
  const fetch: Fetch = (url, init) => {
    if (url === `${CA}/dir`) {
      return Promise.resolve(json({
        newNonce: `${CA}/nonce`,
        newAccount: `${CA}/acct`,
        newOrder: `${CA}/new-order`,
      }));
    }
    if (init.method === "HEAD") return Promise.resolve(json(null));
    posts.push(url.slice(CA.length));
    if (url === `${CA}/acct`) return Promise.resolve(json({}, 201, { location: `${CA}/acct/1` }));
    if (url === `${CA}/new-order`) {
      return Promise.resolve(json(order("pending"), 201, { location: `${CA}/order/1` }));
    }
    if (url === `${CA}/authz/1`) return Promise.resolve(json(script.authz()));
    if (url.startsWith(`${CA}/chal/`)) return Promise.resolve(json({}));
    if (url === `${CA}/order/1` || url === `${CA}/finalize/1`) {
      return Promise.resolve(json(script.order?.() ?? order("ready")));
    }
    return Promise.resolve(json({ type: "urn:ietf:params:acme:error:malformed" }, 404));
  };
  return { fetch, posts };
}

const authz = (status: string, challenges: unknown[]) => ({
  status,
  identifier: { type: "dns", value: "a.test" },
  challenges,
});
const http01 = (status: string, error?: unknown) => ({
  type: "http-01",
  url: `${CA}/chal/1`,
  status,
  token: "tok1",
  ...(error ? { error } : {}),
});

async function run(ca: ReturnType<typeof fakeCa>, challenges = new Http01Challenges()) {
  const { key } = await generateAccountKey();
  const client = new AcmeClient({ directoryUrl: `${CA}/dir`, fetch: ca.fetch, key });
  let now = 0;
  return orderCertificate({
    client,
    domains: ["a.test"],
    challenges,
    now: () => now,
    sleep: (ms) => {
      now += ms;
      return Promise.resolve();
    },
    deadlineMs: 30_000,
  });
}

Deno.test("orderCertificate: a server without an http-01 challenge fails the order, saying so", async () => {
  const ca = fakeCa({
    authz: () => authz("pending", [{ type: "dns-01", url: `${CA}/chal/2`, status: "pending" }]),
  });
  await assert.rejects(
    run(ca),
    (e) =>
      e instanceof OrderFailed && e.message === "a.test: the server offers no http-01 challenge",
  );
});

Deno.test("orderCertificate: an invalid authorization gives the CA's reason; the token is withdrawn", async () => {
  let polls = 0;
  const challenges = new Http01Challenges();
  challenges.setDomains(["a.test"]);
  const seen: (string | null | undefined)[] = [];
  const ca = fakeCa({
    authz: () => {
      polls++;
      seen.push(challenges.answer("a.test", "/.well-known/acme-challenge/tok1"));
      return polls < 3 ? authz("pending", [http01("pending")]) : authz("invalid", [
        http01("invalid", {
          type: "urn:ietf:params:acme:error:connection",
          detail: "127.0.0.1: Connection refused",
        }),
      ]);
    },
  });
  await assert.rejects(
    run(ca, challenges),
    /^OrderFailed: a\.test: authorization invalid: connection: 127\.0\.0\.1: Connection refused$/,
  );
  // Not answered before the challenge was taken up, answered while pending, gone afterwards.
  assert.equal(seen[0], null);
  assert.match(String(seen[1]), /^tok1\.[A-Za-z0-9_-]{43}$/);
  assert.equal(seen[2], seen[1]);
  assert.equal(challenges.pending, 0);
  assert.deepEqual(ca.posts.slice(0, 4), ["/acct", "/new-order", "/authz/1", "/chal/1"]);
});

Deno.test("orderCertificate: an authorization that stays pending ends at the deadline", async () => {
  const ca = fakeCa({ authz: () => authz("pending", [http01("processing")]) });
  await assert.rejects(run(ca), /a\.test: authorization: no outcome before the deadline/);
  // Polls with growing waits: 250 ms doubling to 4 s within 30 s.
  const polls = ca.posts.filter((p) => p === "/authz/1").length;
  assert.ok(polls >= 8 && polls <= 14, String(polls));
  assert.ok(!ca.posts.includes("/chal/1"), "a challenge already processing is not posted again");
});

Deno.test("orderCertificate: an order invalid after finalize gives the CA's reason", async () => {
  let finalized = false;
  const ca = fakeCa({
    authz: () => authz("valid", [http01("valid")]),
    order: () => {
      const base = { authorizations: [`${CA}/authz/1`], finalize: `${CA}/finalize/1` };
      if (!finalized) {
        finalized = true;
        return { ...base, status: "ready" };
      }
      return {
        ...base,
        status: "invalid",
        error: { type: "urn:ietf:params:acme:error:badCSR", detail: "key too weak" },
      };
    },
  });
  await assert.rejects(run(ca), /order invalid after finalize: badCSR: key too weak/);
  assert.ok(ca.posts.includes("/finalize/1"));
});
