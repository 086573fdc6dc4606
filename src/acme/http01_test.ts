import assert from "node:assert/strict";
import { Http01Challenges } from "./http01.ts";

Deno.test("Http01Challenges: a pending token of its domain is answered, others 404", () => {
  const c = new Http01Challenges();
  assert.equal(c.active, false);
  c.setDomains(["A.test", "b.test"]);
  assert.equal(c.active, true);
  c.add("a.test", "tok1", "tok1.thumb");
  assert.equal(c.answer("a.test", "/.well-known/acme-challenge/tok1"), "tok1.thumb");
  assert.equal(c.answer("a.test", "/.well-known/acme-challenge/tok1?x=1"), "tok1.thumb");
  // Another listed domain, an unknown token, a prefix of a token: scalwsd's 404.
  assert.equal(c.answer("b.test", "/.well-known/acme-challenge/tok1"), null);
  assert.equal(c.answer("a.test", "/.well-known/acme-challenge/tok2"), null);
  assert.equal(c.answer("a.test", "/.well-known/acme-challenge/tok"), null);
  assert.equal(c.answer("a.test", "/.well-known/acme-challenge/"), null);
  // Not an ACME domain, or not the challenge path: routed as usual.
  assert.equal(c.answer("c.test", "/.well-known/acme-challenge/tok1"), undefined);
  assert.equal(c.answer("a.test", "/.well-known/acme-challenge"), undefined);
  assert.equal(c.answer("a.test", "/"), undefined);
  c.remove("tok1");
  assert.equal(c.answer("a.test", "/.well-known/acme-challenge/tok1"), null);
  assert.equal(c.pending, 0);
  c.setDomains([]);
  assert.equal(c.active, false);
});
