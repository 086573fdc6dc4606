import assert from "node:assert/strict";
import { Http01Challenges } from "./http01.ts";

Deno.test("Http01Challenges: a pending token of its domain is answered, others 404", async () => {
  const c = new Http01Challenges();
  assert.equal(c.active, false);
  c.setDomains(["A.test", "b.test"]);
  assert.equal(c.active, true);
  await c.add("a.test", "tok1", "tok1.thumb");
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
  await c.remove("tok1");
  assert.equal(c.answer("a.test", "/.well-known/acme-challenge/tok1"), null);
  assert.equal(c.pending, 0);
  c.setDomains([]);
  assert.equal(c.active, false);
});

Deno.test("Http01Challenges: tokens shared through a directory reach another instance", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ordering = new Http01Challenges();
    const other = new Http01Challenges();
    for (const c of [ordering, other]) {
      c.setDomains(["a.test"]);
      c.sharedDir = `${dir}/challenges`;
    }
    await ordering.add("a.test", "tok-1_x", "tok-1_x.thumb");
    assert.equal(other.answer("a.test", "/.well-known/acme-challenge/tok-1_x"), null);
    assert.equal(
      await other.shared("a.test", "/.well-known/acme-challenge/tok-1_x"),
      "tok-1_x.thumb",
    );
    assert.equal(await other.shared("b.test", "/.well-known/acme-challenge/tok-1_x"), null);
    assert.equal(await other.shared("a.test", "/.well-known/acme-challenge/../x"), null);
    assert.equal(await other.shared("a.test", "/.well-known/acme-challenge/nope"), null);
    assert.equal(Deno.statSync(`${dir}/challenges/tok-1_x`).mode! & 0o777, 0o600);
    await ordering.remove("tok-1_x");
    assert.equal(await other.shared("a.test", "/.well-known/acme-challenge/tok-1_x"), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
