import assert from "node:assert/strict";
import { b64url, fromB64url } from "./base64url.ts";
import {
  generateAccountKey,
  importAccountKey,
  keyAuthorization,
  signJws,
  thumbprint,
} from "./jws.ts";

Deno.test("signJws: flattened ES256 JWS whose signature verifies with the public JWK", async () => {
  const { key } = await generateAccountKey();
  const jws = await signJws({
    key,
    signer: { jwk: key.jwk },
    nonce: "n1",
    url: "https://ca.test/new-acct",
    payload: { termsOfServiceAgreed: true },
  });
  const header = JSON.parse(new TextDecoder().decode(fromB64url(jws.protected)));
  assert.deepEqual(header, {
    alg: "ES256",
    nonce: "n1",
    url: "https://ca.test/new-acct",
    jwk: key.jwk,
  });
  assert.deepEqual(JSON.parse(new TextDecoder().decode(fromB64url(jws.payload))), {
    termsOfServiceAgreed: true,
  });
  const pub = await crypto.subtle.importKey(
    "jwk",
    { ...key.jwk },
    { name: "ECDSA", namedCurve: "P-256" },
    false,
    ["verify"],
  );
  const sig = fromB64url(jws.signature);
  assert.equal(sig.length, 64);
  const data = new TextEncoder().encode(`${jws.protected}.${jws.payload}`);
  assert.equal(
    await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, pub, sig, data),
    true,
  );
  data[0] ^= 1;
  assert.equal(
    await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, pub, sig, data),
    false,
  );
});

Deno.test("signJws: POST-as-GET has an empty payload and signs with kid", async () => {
  const { key } = await generateAccountKey();
  const jws = await signJws({
    key,
    signer: { kid: "https://ca.test/acct/1" },
    nonce: "n2",
    url: "https://ca.test/order/1",
    payload: null,
  });
  assert.equal(jws.payload, "");
  const header = JSON.parse(new TextDecoder().decode(fromB64url(jws.protected)));
  assert.equal(header.kid, "https://ca.test/acct/1");
  assert.equal(header.jwk, undefined);
});

Deno.test("thumbprint: SHA-256 of the canonical JWK members in lexical order", async () => {
  const jwk = { crv: "P-256", kty: "EC", x: "AQID", y: "BAUG" } as const;
  const canonical = '{"crv":"P-256","kty":"EC","x":"AQID","y":"BAUG"}';
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical));
  assert.equal(await thumbprint(jwk), b64url(new Uint8Array(digest)));
  assert.equal((await thumbprint(jwk)).length, 43);
});

Deno.test("importAccountKey: a stored private JWK gives the same thumbprint; others refused", async () => {
  const { key, privateJwk } = await generateAccountKey();
  const again = await importAccountKey(privateJwk);
  assert.equal(again.thumbprint, key.thumbprint);
  assert.equal(keyAuthorization("tok", again), `tok.${key.thumbprint}`);
  await assert.rejects(importAccountKey({ ...privateJwk, crv: "P-384" }), /not an EC P-256 JWK/);
  const { d: _d, ...pub } = privateJwk;
  await assert.rejects(importAccountKey(pub), /no private key/);
});
