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
  assert.deepEqual(parseFpmStatus(text), { busy: 2, total: 4 });
  assert.deepEqual(
    parseFpmStatus(JSON.stringify({ "active processes": 0, "total processes": 2 })),
    {
      busy: 0,
      total: 2,
    },
  );
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
