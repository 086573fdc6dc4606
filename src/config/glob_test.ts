import assert from "node:assert/strict";
import { expandGlob, segmentRegExp } from "./glob.ts";

Deno.test("segmentRegExp: star, question mark and classes stay inside one segment", () => {
  assert.ok(segmentRegExp("*.yaml").test("a.yaml"));
  assert.ok(!segmentRegExp("*.yaml").test("a.yml"));
  assert.ok(segmentRegExp("site-?.y[a]ml").test("site-1.yaml"));
  assert.ok(segmentRegExp("[!x]*").test("a"));
  assert.ok(!segmentRegExp("[!x]*").test("xa"));
  assert.throws(() => segmentRegExp("**"), /not supported/);
});

Deno.test("expandGlob lists matching files relative to the main file's directory, sorted", () => {
  const dir = Deno.makeTempDirSync();
  try {
    Deno.mkdirSync(`${dir}/sites/sub`, { recursive: true });
    for (const f of ["b.yaml", "a.yaml", ".hidden.yaml", "c.txt"]) {
      Deno.writeTextFileSync(`${dir}/sites/${f}`, "");
    }
    Deno.writeTextFileSync(`${dir}/sites/sub/d.yaml`, "");
    assert.deepEqual(expandGlob("sites/*.yaml", dir), [
      `${dir}/sites/a.yaml`,
      `${dir}/sites/b.yaml`,
    ]);
    assert.deepEqual(expandGlob(`${dir}/sites/*/*.yaml`, "/elsewhere"), [
      `${dir}/sites/sub/d.yaml`,
    ]);
    assert.deepEqual(expandGlob("nothing/*.yaml", dir), []);
    assert.deepEqual(expandGlob("sites/c.txt", dir), [`${dir}/sites/c.txt`]);
    assert.throws(() => expandGlob("sites/none.yaml", dir), /no such file/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
