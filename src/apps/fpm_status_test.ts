import assert from "node:assert/strict";
import { parseFpmStatus } from "./fpm_status.ts";

Deno.test("parseFpmStatus: busy processes leave out the status request itself", () => {
  const text = JSON.stringify({
    pool: "www",
    "process manager": "static",
    "listen queue": 0,
    "idle processes": 1,
    "active processes": 3,
    "total processes": 4,
  });
  assert.deepEqual(parseFpmStatus(text), { busy: 2, total: 4, maxChildren: 4 });
  assert.deepEqual(
    parseFpmStatus(JSON.stringify({ "active processes": 0, "total processes": 2 })),
    { busy: 0, total: 2, maxChildren: null },
  );
});

Deno.test("parseFpmStatus: pm.max_children is known for a static pool only", () => {
  const page = (pm: string) =>
    JSON.stringify({ "process manager": pm, "active processes": 1, "total processes": 3 });
  assert.equal(parseFpmStatus(page("static"))?.maxChildren, 3);
  assert.equal(parseFpmStatus(page("dynamic"))?.maxChildren, null);
  assert.equal(parseFpmStatus(page("ondemand"))?.maxChildren, null);
});

Deno.test("parseFpmStatus: anything else is null", () => {
  assert.equal(parseFpmStatus("pool: www\nactive processes: 1\n"), null);
  assert.equal(parseFpmStatus("{}"), null);
  assert.equal(parseFpmStatus('"x"'), null);
  assert.equal(
    parseFpmStatus(JSON.stringify({ "active processes": "1", "total processes": 2 })),
    null,
  );
});
