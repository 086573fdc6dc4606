import assert from "node:assert/strict";
import type { BackendEntry } from "../config/types.ts";
import { BackendSelector } from "./backends.ts";

function label(e: BackendEntry): string {
  return e.pool ?? String(e.status);
}

function run(sel: BackendSelector, n: number, has: (p: string) => boolean): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(label(sel.pick(has)));
  return out;
}

Deno.test("BackendSelector splits by smooth weighted round robin", () => {
  const sel = new BackendSelector([
    { pool: "a", weight: 5 },
    { pool: "b", weight: 1 },
    { pool: "c", weight: 1 },
  ]);
  assert.equal(run(sel, 14, () => true).join(" "), "a a b a c a a a a b a c a a");
});

Deno.test("BackendSelector never chooses a weight 0 entry", () => {
  const sel = new BackendSelector([
    { pool: "idle", weight: 0 },
    { pool: "v1", weight: 90 },
    { pool: "v2", weight: 10 },
  ]);
  const picks = run(sel, 1000, () => true);
  assert.equal(picks.filter((p) => p === "idle").length, 0);
  assert.equal(picks.filter((p) => p === "v2").length, 100);
});

Deno.test("BackendSelector skips a pool without members while another entry is eligible", () => {
  const sel = new BackendSelector([
    { pool: "stable", weight: 90 },
    { pool: "canary", weight: 10 },
  ]);
  assert.deepEqual(new Set(run(sel, 200, (p) => p !== "canary")), new Set(["stable"]));
  const picks = run(sel, 100, () => true);
  assert.equal(picks.filter((p) => p === "canary").length, 10);
});

Deno.test("BackendSelector never skips status entries and falls back to empty pools when nothing else is left", () => {
  const sel = new BackendSelector([
    { pool: "a", weight: 1 },
    { status: 503, weight: 1 },
  ]);
  assert.deepEqual(run(sel, 4, () => false), ["503", "503", "503", "503"]);
  const only = new BackendSelector([{ pool: "a", weight: 3 }, { pool: "b", weight: 1 }]);
  assert.equal(run(only, 8, () => false).join(" "), "a a b a a a b a");
  assert.throws(
    () => new BackendSelector([{ pool: "a", weight: 0 }]),
    /at least one entry with a weight above 0/,
  );
});
