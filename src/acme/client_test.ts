import assert from "node:assert/strict";
import { fromB64url } from "./base64url.ts";
import { AcmeClient, BAD_NONCE_RETRIES } from "./client.ts";
import { AcmeProblem, AcmeProtocolError } from "./errors.ts";
import { generateAccountKey } from "./jws.ts";
import type { Fetch } from "./nonce.ts";

const CA = "https://ca.test";
const DIRECTORY = JSON.stringify({
  newNonce: `${CA}/nonce`,
  newAccount: `${CA}/acct`,
  newOrder: `${CA}/order`,
});

/** A scripted ACME server: records each request's method, URL and JWS nonce. */
function fakeServer(answer: (url: string, nonce: string | null) => Response) {
  const seen: { method: string; url: string; nonce: string | null }[] = [];
  let n = 0;
  const fetch: Fetch = (url, init) => {
    let nonce: string | null = null;
    if (typeof init.body === "string") {
      const jws = JSON.parse(init.body);
      nonce = JSON.parse(new TextDecoder().decode(fromB64url(jws.protected))).nonce;
    }
    seen.push({ method: init.method ?? "GET", url, nonce });
    if (url === CA + "/dir") return Promise.resolve(new Response(DIRECTORY));
    if (url === CA + "/nonce") {
      return Promise.resolve(new Response(null, { headers: { "replay-nonce": `fresh${++n}` } }));
    }
    return Promise.resolve(answer(url, nonce));
  };
  return { fetch, seen };
}

const problem = (type: string, status: number, nonce: string) =>
  new Response(JSON.stringify({ type: `urn:ietf:params:acme:error:${type}`, detail: "d" }), {
    status,
    headers: {
      "content-type": "application/problem+json",
      "replay-nonce": nonce,
      ...(status === 429 ? { "retry-after": "3600" } : {}),
    },
  });

Deno.test("AcmeClient: a badNonce answer is retried with the nonce it carried", async () => {
  const { key } = await generateAccountKey();
  let calls = 0;
  const server = fakeServer((_url, nonce) => {
    calls++;
    if (calls === 1) return problem("badNonce", 400, "from-error");
    assert.equal(nonce, "from-error");
    return new Response("{}", { status: 201, headers: { location: `${CA}/acct/7` } });
  });
  const c = new AcmeClient({ directoryUrl: `${CA}/dir`, fetch: server.fetch, key });
  assert.equal(await c.account("ops@a.test"), `${CA}/acct/7`);
  assert.deepEqual(server.seen.map((s) => `${s.method} ${s.url} ${s.nonce}`), [
    `GET ${CA}/dir null`,
    `HEAD ${CA}/nonce null`,
    `POST ${CA}/acct fresh1`,
    `POST ${CA}/acct from-error`,
  ]);
  assert.equal(c.kid, `${CA}/acct/7`);
});

Deno.test("AcmeClient: badNonce gives up after its retries; other problems are thrown at once", async () => {
  const { key } = await generateAccountKey();
  let i = 0;
  const server = fakeServer(() => problem("badNonce", 400, `n${i++}`));
  const c = new AcmeClient({ directoryUrl: `${CA}/dir`, fetch: server.fetch, key });
  c.kid = `${CA}/acct/1`;
  const err = await c.post(`${CA}/order`, {}).catch((e) => e);
  assert.ok(err instanceof AcmeProblem);
  assert.equal(err.short, "badNonce");
  assert.equal(server.seen.filter((s) => s.method === "POST").length, BAD_NONCE_RETRIES + 1);

  const other = fakeServer(() => problem("rateLimited", 429, "z"));
  const c2 = new AcmeClient({ directoryUrl: `${CA}/dir`, fetch: other.fetch, key });
  c2.kid = `${CA}/acct/1`;
  const limited = await c2.post(`${CA}/order`, {}).catch((e) => e);
  assert.match(limited.message, /429 urn:ietf:params:acme:error:rateLimited: d/);
  assert.equal(limited.retryAfter, "3600");
  assert.equal(other.seen.filter((s) => s.method === "POST").length, 1);
});

Deno.test("AcmeClient: answers it cannot use are refused clearly", async () => {
  const { key } = await generateAccountKey();
  const html = fakeServer(() => new Response("<h1>oops</h1>", { status: 502 }));
  const c = new AcmeClient({ directoryUrl: `${CA}/dir`, fetch: html.fetch, key });
  c.kid = "k";
  await assert.rejects(c.post(`${CA}/x`, null), /answered 502 without a problem document/);
  // No Location for the account.
  const noLoc = fakeServer(() => new Response("{}", { status: 201 }));
  const c2 = new AcmeClient({ directoryUrl: `${CA}/dir`, fetch: noLoc.fetch, key });
  await assert.rejects(c2.account(), AcmeProtocolError);
  // A nonce endpoint without Replay-Nonce.
  const fetch: Fetch = (url) =>
    Promise.resolve(url.endsWith("/dir") ? new Response(DIRECTORY) : new Response(null));
  const c3 = new AcmeClient({ directoryUrl: `${CA}/dir`, fetch, key });
  c3.kid = "k";
  await assert.rejects(c3.post(`${CA}/x`, null), /no usable Replay-Nonce/);
  // A directory that requires external account binding.
  const eab: Fetch = () =>
    Promise.resolve(
      new Response(
        JSON.stringify({ ...JSON.parse(DIRECTORY), meta: { externalAccountRequired: true } }),
      ),
    );
  const c4 = new AcmeClient({ directoryUrl: `${CA}/dir`, fetch: eab, key });
  await assert.rejects(c4.account(), /external account binding, not supported/);
});

Deno.test("AcmeClient: nonces from answers are used before asking newNonce", async () => {
  const { key } = await generateAccountKey();
  let i = 0;
  const server = fakeServer(() =>
    new Response("{}", { status: 200, headers: { "replay-nonce": `next${++i}` } })
  );
  const c = new AcmeClient({ directoryUrl: `${CA}/dir`, fetch: server.fetch, key });
  c.kid = "k";
  await c.post(`${CA}/a`, null);
  await c.post(`${CA}/b`, null);
  await c.post(`${CA}/c`, null);
  assert.deepEqual(server.seen.filter((s) => s.method === "POST").map((s) => s.nonce), [
    "fresh1",
    "next1",
    "next2",
  ]);
});
