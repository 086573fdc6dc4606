import assert from "node:assert/strict";
import type { Config } from "../config/types.ts";
import { openFileLimit, openFilesWarning, raiseOpenFileLimit } from "./open_files.ts";

function withMax(max: number): Config {
  return { server: { limits: { max_connections: max } } } as unknown as Config;
}

Deno.test("raiseOpenFileLimit lifts the soft open-file limit to the hard one", () => {
  const before = openFileLimit();
  assert.ok(before !== null, "getrlimit through FFI");
  const r = raiseOpenFileLimit()!;
  assert.deepEqual(r.before.hard, before.hard);
  assert.equal(r.after.soft, before.hard === Infinity ? 1_048_576 : before.hard);
  assert.deepEqual(openFileLimit(), r.after);
});

Deno.test("openFilesWarning says how many connections the open-file limit allows", () => {
  assert.equal(openFilesWarning(withMax(0), 1024, true), null);
  assert.equal(openFilesWarning(withMax(4900), 20_000, true), null);
  assert.equal(
    openFilesWarning(withMax(10_000), 20_000, true),
    "server.limits.max_connections: 10000 connections need up to 40256 open files (4 each, " +
      "TLS listeners relaying, plus 256), but the open-file limit is 20000: about 4936 can be " +
      "served (raise the hard limit: ulimit -Hn, LimitNOFILE=)",
  );
  assert.match(openFilesWarning(withMax(10_000), 20_000, false)!, /\(2 each, plus 256\).*9872/);
});
