import assert from "node:assert/strict";
import { ensureMigrateReq, MIGRATE_REQ_FIX, type MigrateReqDeps } from "./migrate_req.ts";

/** A sysctl in memory; `allowed`: whether writes take. */
function fake(value: string | null, allowed: boolean): MigrateReqDeps & { writes: string[] } {
  const writes: string[] = [];
  return {
    writes,
    read: () => Promise.resolve(value),
    write(v) {
      writes.push(v);
      if (allowed) value = v;
      return Promise.resolve(allowed);
    },
  };
}

Deno.test("ensureMigrateReq: 0 becomes 1 when the controller may set it", async () => {
  const f = fake("0", true);
  assert.deepEqual(await ensureMigrateReq("enable", f), {
    value: "1",
    previous: "0",
    warning: null,
  });
  assert.deepEqual(f.writes, ["1"]);
});

Deno.test("ensureMigrateReq: already 1, nothing is written", async () => {
  const f = fake("1", true);
  assert.deepEqual(await ensureMigrateReq("enable", f), {
    value: "1",
    previous: null,
    warning: null,
  });
  assert.deepEqual(f.writes, []);
});

Deno.test("ensureMigrateReq: not allowed, the warning says what to set", async () => {
  const f = fake("0", false);
  const s = await ensureMigrateReq("enable", f);
  assert.equal(s.value, "0");
  assert.equal(s.previous, null);
  assert.equal(
    s.warning,
    "net.ipv4.tcp_migrate_req is 0: connections queued on a draining instance's listening " +
      "socket are reset instead of moving to another instance; " + MIGRATE_REQ_FIX,
  );
  assert.match(MIGRATE_REQ_FIX, /sysctl -w net\.ipv4\.tcp_migrate_req=1/);
});

Deno.test("ensureMigrateReq: leave reads only, and warns about 0", async () => {
  const f = fake("0", true);
  const s = await ensureMigrateReq("leave", f);
  assert.deepEqual(f.writes, []);
  assert.equal(s.value, "0");
  assert.match(s.warning!, /^net\.ipv4\.tcp_migrate_req is 0: /);
});

Deno.test("ensureMigrateReq: an unreadable value (old kernel) is a warning, nothing written", async () => {
  const f = fake(null, true);
  const s = await ensureMigrateReq("enable", f);
  assert.deepEqual(f.writes, []);
  assert.equal(s.value, null);
  assert.match(s.warning!, /cannot be read/);
});
