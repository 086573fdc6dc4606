import assert from "node:assert/strict";
import { SharedEpoch } from "./disk_epoch.ts";
import { mappings } from "./_maps_for_test.ts";

Deno.test("SharedEpoch: two mappings of one directory's epoch see each other's bumps", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-epoch-" });
  try {
    const a = SharedEpoch.open(dir)!;
    const b = SharedEpoch.open(dir)!;
    assert.ok(a !== null && b !== null);
    const v = a.value;
    a.bump();
    assert.equal(b.value, v + 1);
    b.bump();
    b.bump();
    assert.equal(a.value, v + 3);
    // Made 4 KiB once and never shorter (a mapped page past the end would fault).
    assert.equal(Deno.statSync(`${dir}/epoch`).size, 4096);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SharedEpoch.close unmaps the counter; a bump after it still reaches the others", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-epoch-" });
  try {
    const a = SharedEpoch.open(dir)!;
    const b = SharedEpoch.open(dir)!;
    assert.equal(await mappings(`${dir}/epoch`), 2);
    const v = b.value;
    a.close();
    a.close();
    assert.equal(await mappings(`${dir}/epoch`), 1);
    assert.ok(Number.isNaN(a.value));
    a.bump();
    assert.equal(b.value, v + 1);
    assert.equal(await mappings(`${dir}/epoch`), 1);
    b.close();
    assert.equal(await mappings(`${dir}/epoch`), 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
