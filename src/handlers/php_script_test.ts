import assert from "node:assert/strict";
import { resolveScript, splitAfterPhp, STATIC } from "./php_script.ts";

Deno.test("splitAfterPhp: the first segment ending in .php", () => {
  assert.equal(splitAfterPhp("/index.php"), 10);
  assert.equal(splitAfterPhp("/a.php/b.php/c"), 6);
  assert.equal(splitAfterPhp("/uploads/evil.jpg/x.php"), 23);
  assert.equal(splitAfterPhp("/x.php.jpg"), -1);
  assert.equal(splitAfterPhp("/a.phpx/b"), -1);
  assert.equal(splitAfterPhp("/dir/.php"), -1);
  assert.equal(splitAfterPhp("/"), -1);
});

Deno.test("resolveScript: scripts, PATH_INFO, files, directories, the front controller", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir());
  const out = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${root}/index.php`, "");
    await Deno.writeTextFile(`${root}/a.css`, "");
    await Deno.mkdir(`${root}/d`);
    await Deno.mkdir(`${root}/e`);
    await Deno.writeTextFile(`${root}/e/index.php`, "");
    await Deno.mkdir(`${root}/dir.php`);
    await Deno.writeTextFile(`${root}/img.jpg`, "");
    await Deno.writeTextFile(`${out}/x.php`, "");
    await Deno.symlink(`${out}/x.php`, `${root}/out.php`);
    await Deno.symlink(`${root}/img.jpg`, `${root}/img.php`);
    await Deno.symlink(`${root}/index.php`, `${root}/src`);
    const q = (path: string, fc?: string) =>
      resolveScript({ root, path, index: "index.php", frontController: fc });
    assert.deepEqual(await q("/index.php/a/b"), {
      kind: "script",
      filename: `${root}/index.php`,
      scriptName: "/index.php",
      pathInfo: "/a/b",
    });
    assert.equal(await q("/a.css"), STATIC);
    assert.equal(await q("/d"), STATIC); // the static handler redirects to /d/
    assert.equal(await q("/d/"), 403);
    assert.equal(await q("/missing"), 404);
    assert.equal(await q("/src"), 403);
    assert.deepEqual(await q("/e/"), {
      kind: "script",
      filename: `${root}/e/index.php`,
      scriptName: "/e/index.php",
      pathInfo: "",
    });
    const front = {
      kind: "script",
      filename: `${root}/index.php`,
      scriptName: "/index.php",
      pathInfo: "",
    };
    for (const p of ["/missing", "/d/", "/out.php", "/img.php", "/img.jpg/x.php", "/dir.php"]) {
      assert.deepEqual(await q(p, "/index.php"), front, p);
      assert.equal(await q(p), p === "/d/" ? 403 : 404, p);
    }
    // A front controller that is not a script under the root runs nothing.
    assert.equal(await q("/missing", "/img.php"), 404);
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(out, { recursive: true });
  }
});
