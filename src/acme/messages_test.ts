import assert from "node:assert/strict";
import { AcmeProtocolError } from "./errors.ts";
import {
  parseAuthorization,
  parseChallenge,
  parseDirectory,
  parseOrder,
  parseProblem,
} from "./messages.ts";

const CA = "https://ca.test";

Deno.test("parseDirectory: the three URLs and externalAccountRequired", () => {
  const d = parseDirectory(JSON.stringify({
    newNonce: `${CA}/nonce`,
    newAccount: `${CA}/acct`,
    newOrder: `${CA}/order`,
    revokeCert: `${CA}/revoke`,
    meta: { termsOfService: `${CA}/tos`, externalAccountRequired: true },
  }));
  assert.deepEqual(d, {
    newNonce: `${CA}/nonce`,
    newAccount: `${CA}/acct`,
    newOrder: `${CA}/order`,
    externalAccountRequired: true,
  });
});

Deno.test("parseDirectory refuses what it does not understand", () => {
  const cases: [string, RegExp][] = [
    ["<html>", /directory: not JSON/],
    ["[]", /directory: not a JSON object/],
    [JSON.stringify({ newAccount: `${CA}/a`, newOrder: `${CA}/o` }), /"newNonce" is missing/],
    [
      JSON.stringify({ newNonce: "nonce", newAccount: `${CA}/a`, newOrder: `${CA}/o` }),
      /"newNonce" is not a URL/,
    ],
    [
      JSON.stringify({ newNonce: `ftp://x/`, newAccount: `${CA}/a`, newOrder: `${CA}/o` }),
      /"newNonce" must be an http\(s\) URL/,
    ],
    [
      JSON.stringify({ newNonce: `${CA}/n`, newAccount: 5, newOrder: `${CA}/o` }),
      /"newAccount" must be a non-empty string/,
    ],
    [
      JSON.stringify({
        newNonce: `${CA}/n`,
        newAccount: `${CA}/a`,
        newOrder: `${CA}/o`,
        meta: { externalAccountRequired: "yes" },
      }),
      /externalAccountRequired" must be a boolean/,
    ],
  ];
  for (const [text, re] of cases) assert.throws(() => parseDirectory(text), re);
  assert.throws(() => parseDirectory("{"), AcmeProtocolError);
});

Deno.test("parseOrder: statuses, certificate when valid, the error problem", () => {
  const base = { authorizations: [`${CA}/authz/1`], finalize: `${CA}/fin/1` };
  assert.deepEqual(parseOrder(JSON.stringify({ ...base, status: "pending", expires: "x" })), {
    status: "pending",
    ...base,
  });
  assert.equal(
    parseOrder(JSON.stringify({ ...base, status: "valid", certificate: `${CA}/cert/1` }))
      .certificate,
    `${CA}/cert/1`,
  );
  assert.deepEqual(
    parseOrder(JSON.stringify({
      ...base,
      status: "invalid",
      error: { type: "urn:ietf:params:acme:error:unauthorized", detail: "no" },
    })).error,
    { type: "urn:ietf:params:acme:error:unauthorized", detail: "no" },
  );
  assert.throws(() => parseOrder(JSON.stringify({ ...base, status: "valid" })), /certificate/);
  assert.throws(() => parseOrder(JSON.stringify({ ...base, status: "done" })), /unknown status/);
  assert.throws(
    () => parseOrder(JSON.stringify({ ...base, status: "ready", authorizations: [] })),
    /"authorizations" must be a non-empty array/,
  );
  assert.throws(
    () => parseOrder(JSON.stringify({ ...base, status: "ready", authorizations: [7] })),
    /order authorizations: "0"/,
  );
  assert.throws(
    () => parseOrder(JSON.stringify({ status: "ready", authorizations: base.authorizations })),
    /"finalize" is missing/,
  );
  assert.throws(
    () => parseOrder(JSON.stringify({ ...base, status: "invalid", error: "bad" })),
    /"error" must be an object/,
  );
});

Deno.test("parseAuthorization and parseChallenge: identifier, challenges, tokens", () => {
  const a = parseAuthorization(JSON.stringify({
    status: "pending",
    identifier: { type: "dns", value: "a.test" },
    challenges: [
      { type: "http-01", url: `${CA}/ch/1`, status: "pending", token: "abc_-9" },
      { type: "dns-01", url: `${CA}/ch/2`, status: "pending", token: "def" },
    ],
  }));
  assert.equal(a.identifier.value, "a.test");
  assert.equal(a.wildcard, false);
  assert.deepEqual(a.challenges[0], {
    type: "http-01",
    url: `${CA}/ch/1`,
    status: "pending",
    token: "abc_-9",
  });
  const ok = { type: "http-01", url: `${CA}/c`, status: "pending" };
  assert.throws(() => parseChallenge({ ...ok, token: "../etc" }), /"token" must be base64url/);
  assert.throws(() => parseChallenge({ ...ok, status: "weird" }), /unknown status/);
  assert.throws(() => parseChallenge({ ...ok, url: undefined }), /"url" is missing/);
  assert.throws(() => parseChallenge(null), /not a JSON object/);
  assert.throws(
    () => parseAuthorization(JSON.stringify({ status: "pending", challenges: [] })),
    /"identifier" must be an object/,
  );
  assert.throws(
    () =>
      parseAuthorization(
        JSON.stringify({ status: "pending", identifier: { type: "dns", value: "a" } }),
      ),
    /"challenges" must be an array/,
  );
  assert.throws(
    () =>
      parseAuthorization(JSON.stringify({
        status: "valid",
        identifier: { type: "dns", value: "a" },
        challenges: [{ ...ok, status: 3 }],
      })),
    /authorization challenges\[0\]: "status" must be a non-empty string/,
  );
});

Deno.test("parseProblem: type and detail, or refused", () => {
  assert.deepEqual(parseProblem('{"type":"urn:ietf:params:acme:error:badNonce","detail":"x"}'), {
    type: "urn:ietf:params:acme:error:badNonce",
    detail: "x",
  });
  assert.deepEqual(parseProblem("{}"), { type: "", detail: "" });
  assert.throws(() => parseProblem('{"type":1}'), AcmeProtocolError);
  assert.throws(() => parseProblem("Bad Gateway"), AcmeProtocolError);
});
