import assert from "node:assert/strict";
import { plan, SERIAL } from "./test.ts";

Deno.test("test plan: the suite in parallel, then the memory tests alone; named files as given", () => {
  const whole = plan([]);
  assert.equal(whole.length, 2);
  assert.ok(whole[0].includes("--parallel"));
  for (const f of SERIAL) {
    assert.ok(whole[0].includes(`--ignore=${f}`));
    assert.ok(whole[1].includes(f));
  }
  assert.ok(!whole[1].includes("--parallel"));
  const one = plan(["tests/front_test.ts", "--filter", "x"]);
  assert.deepEqual(one.length, 1);
  assert.deepEqual(one[0].slice(-3), ["tests/front_test.ts", "--filter", "x"]);
  assert.ok(!one[0].includes("--parallel"));
  // Flags alone still mean the whole suite.
  assert.equal(plan(["--fail-fast"]).length, 2);
});

Deno.test("the serial files exist and read the process's memory", async () => {
  for (const f of SERIAL) {
    const text = await Deno.readTextFile(new URL(`../${f}`, import.meta.url));
    assert.match(text, /memoryUsage\(\)/, f);
  }
});
