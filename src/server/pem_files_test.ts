import assert from "node:assert/strict";
import { PemFiles } from "./pem_files.ts";

Deno.test("PemFiles reads each path once and returns the same text", () => {
  const reads: string[] = [];
  const files = new PemFiles((path) => {
    reads.push(path);
    return `text of ${path} #${reads.length}`;
  });
  const read = files.read; // used detached, as a PemReader
  assert.equal(read("/a.pem"), "text of /a.pem #1");
  assert.equal(read("/b.pem"), "text of /b.pem #2");
  assert.equal(read("/a.pem"), "text of /a.pem #1");
  assert.deepEqual(reads, ["/a.pem", "/b.pem"]);
});

Deno.test("PemFiles throws a failed read's error again without reading again", () => {
  let calls = 0;
  const files = new PemFiles((path) => {
    calls++;
    throw new Error(`cannot read ${path} #${calls}`);
  });
  assert.throws(() => files.read("/a.pem"), { message: "cannot read /a.pem #1" });
  assert.throws(() => files.read("/a.pem"), { message: "cannot read /a.pem #1" });
  assert.throws(() => files.read("/b.pem"), { message: "cannot read /b.pem #2" });
  assert.equal(calls, 2);
});

Deno.test("PemFiles reads from disk by default", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-pem-" });
  try {
    await Deno.writeTextFile(`${dir}/ca.pem`, "pem text");
    assert.equal(new PemFiles().read(`${dir}/ca.pem`), "pem text");
    assert.throws(() => new PemFiles().read(`${dir}/missing.pem`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
