import assert from "node:assert/strict";
import { SCRIPT_CACHE_SIZE, SCRIPT_CACHE_TTL, ScriptCache } from "./script_cache.ts";

Deno.test("ScriptCache: a resolution is reused for one TTL, then resolved again", () => {
  let now = 0;
  const c = new ScriptCache({ now: () => now });
  c.set("/a.php", 404);
  assert.equal(c.get("/a.php"), 404);
  now = SCRIPT_CACHE_TTL - 1;
  assert.equal(c.get("/a.php"), 404);
  now = SCRIPT_CACHE_TTL;
  assert.equal(c.get("/a.php"), undefined);
  assert.equal(c.get("/b.php"), undefined);
});

Deno.test("ScriptCache: starts over when full", () => {
  const c = new ScriptCache({ now: () => 0 });
  for (let i = 0; i < SCRIPT_CACHE_SIZE; i++) c.set(`/${i}`, 404);
  assert.equal(c.get("/0"), 404);
  c.set("/new", 403);
  assert.equal(c.get("/0"), undefined);
  assert.equal(c.get("/new"), 403);
});
