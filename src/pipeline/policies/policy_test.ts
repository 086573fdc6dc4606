import assert from "node:assert/strict";
import { type Policy, PolicyHandler } from "./policy.ts";
import { recorder, testExchange } from "../../../tests/_support/test_exchange.ts";

function tracer(name: string, trail: string[], answer?: number, wait = false): Policy {
  return {
    name,
    request(ex) {
      trail.push(`in:${name}`);
      if (answer !== undefined) {
        ex.answered(answer);
        const res = new Response(null, { status: answer });
        return wait ? Promise.resolve(res) : res;
      }
      return wait ? Promise.resolve(null) : null;
    },
    response(_ex, res) {
      trail.push(`out:${name}`);
      return res;
    },
  };
}

Deno.test("PolicyHandler runs request phases in order and response phases in reverse", async () => {
  const trail: string[] = [];
  const { handler, seen } = recorder();
  const h = new PolicyHandler(
    [tracer("a", trail), tracer("b", trail, undefined, true), tracer("c", trail)],
    handler,
  );
  const res = await h.handle(testExchange("/x"));
  assert.equal(res.status, 200);
  assert.deepEqual(seen, ["/x"]);
  assert.deepEqual(trail, ["in:a", "in:b", "in:c", "out:c", "out:b", "out:a"]);
});

Deno.test("PolicyHandler: an answer from a policy skips the rest and goes back through earlier ones", async () => {
  for (const wait of [false, true]) {
    const trail: string[] = [];
    const { handler, seen } = recorder();
    const h = new PolicyHandler(
      [tracer("a", trail), tracer("b", trail, 401, wait), tracer("c", trail)],
      handler,
    );
    const ex = testExchange("/x");
    const res = await h.handle(ex);
    assert.equal(res.status, 401);
    assert.equal(ex.status, 401);
    assert.deepEqual(seen, []);
    assert.deepEqual(trail, ["in:a", "in:b", "out:a"]);
  }
});
