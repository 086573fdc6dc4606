import assert from "node:assert/strict";
import { EditedHeaders } from "./edited_headers.ts";

Deno.test("EditedHeaders: set, append and delete over the original, read by get and forEach", () => {
  const base = new Headers({ a: "1", b: "2", authorization: "x" });
  const e = new EditedHeaders(base);
  assert.equal(e.get("a"), "1");
  e.set("a", "one");
  e.append("b", "3");
  e.append("c", "4");
  e.delete("authorization");
  assert.equal(e.get("a"), "one");
  assert.equal(e.get("b"), "2, 3");
  assert.equal(e.get("authorization"), null);
  const lines: string[] = [];
  e.forEach(function (this: string[], v, n) {
    this.push(`${n}=${v}`);
  }, lines);
  assert.deepEqual(lines, ["b=2", "a=one", "b=3", "c=4"]);
  assert.deepEqual([...e.toHeaders()], [["a", "one"], ["b", "2, 3"], ["c", "4"]]);
  assert.equal(base.get("a"), "1"); // the original is untouched
});
