import assert from "node:assert/strict";
import { chownSync, lchownSync } from "node:fs";
import { INSIDE_ROOT, SymlinkRule } from "./symlinks.ts";

const NOBODY = 65534;
const asRoot = Deno.uid() === 0;

/**
 * A root with a file, a link inside, links out (a sibling tree, `/etc/passwd`, a directory),
 * and an "allowed" tree beside it. As root, `theirs` is a link owned by nobody to a file of
 * root's, `mine` a link owned by nobody to a file owned by nobody; otherwise the test user owns
 * every link and `theirs` leads to root's `/etc/passwd`.
 */
async function tree() {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "scalwsd-links-" }));
  const root = `${base}/root`;
  const shared = `${base}/shared`;
  await Deno.mkdir(`${root}/sub`, { recursive: true });
  await Deno.mkdir(`${shared}/js`, { recursive: true });
  await Deno.writeTextFile(`${root}/a.txt`, "a");
  await Deno.writeTextFile(`${shared}/js/lib.js`, "lib");
  await Deno.writeTextFile(`${shared}/own.txt`, "own");
  await Deno.symlink(`${root}/a.txt`, `${root}/in.txt`);
  await Deno.symlink("../../shared/js/lib.js", `${root}/sub/lib.js`);
  await Deno.symlink(`${shared}/js`, `${root}/jsdir`);
  await Deno.symlink("/etc/passwd", `${root}/passwd`);
  await Deno.symlink(asRoot ? `${shared}/js/lib.js` : "/etc/passwd", `${root}/theirs`);
  await Deno.symlink(`${shared}/own.txt`, `${root}/mine`);
  if (asRoot) {
    lchownSync(`${root}/theirs`, NOBODY, NOBODY);
    lchownSync(`${root}/mine`, NOBODY, NOBODY);
    chownSync(`${shared}/own.txt`, NOBODY, NOBODY);
  }
  return {
    base,
    root,
    shared,
    [Symbol.asyncDispose]: () => Deno.remove(base, { recursive: true }),
  };
}

Deno.test("SymlinkRule inside_root: links that end under the root only", async () => {
  await using t = await tree();
  const r = (rel: string) => INSIDE_ROOT.resolve(t.root, rel);
  assert.equal(await r("/a.txt"), `${t.root}/a.txt`);
  assert.equal(await r("/in.txt"), `${t.root}/a.txt`);
  assert.equal(await r("/sub/"), `${t.root}/sub`);
  assert.equal(await r("/passwd"), null, "a link to /etc/passwd is refused");
  assert.equal(await r("/sub/lib.js"), null);
  assert.equal(await r("/jsdir/lib.js"), null, "a directory link out of the root");
  await assert.rejects(r("/missing"), Deno.errors.NotFound);
});

Deno.test("SymlinkRule allowed_roots: named trees are reached whatever the mode", async () => {
  await using t = await tree();
  for (const mode of ["inside_root", "owner_match"] as const) {
    const rule = new SymlinkRule(mode, [`${t.shared}/js`, "/nonexistent/tree"]);
    const r = (rel: string) => rule.resolve(t.root, rel);
    assert.equal(await r("/sub/lib.js"), `${t.shared}/js/lib.js`, mode);
    assert.equal(await r("/jsdir/lib.js"), `${t.shared}/js/lib.js`, mode);
    assert.equal(await r("/in.txt"), `${t.root}/a.txt`, mode);
    if (mode === "inside_root") {
      assert.equal(await r("/passwd"), null, mode);
      assert.equal(await r("/mine"), null, "outside the allowed trees");
    }
  }
});

Deno.test("SymlinkRule owner_match: a link is followed when it and its target share an owner", async () => {
  await using t = await tree();
  const rule = new SymlinkRule("owner_match");
  const r = (rel: string) => rule.resolve(t.root, rel);
  assert.equal(await r("/a.txt"), `${t.root}/a.txt`, "no link at all");
  assert.equal(await r("/mine"), `${t.shared}/own.txt`);
  assert.equal(await r("/theirs"), null, "the link's owner is not the target's");
  // The test user's own links lead out of the root too, when the owners match.
  assert.equal(await r("/sub/lib.js"), `${t.shared}/js/lib.js`);
  assert.equal(await r("/jsdir/lib.js"), `${t.shared}/js/lib.js`);
  if (!asRoot) assert.equal(await r("/passwd"), null, "root owns /etc/passwd, the user the link");
});

Deno.test("SymlinkRule always: every link is followed", async () => {
  await using t = await tree();
  const rule = new SymlinkRule("always");
  const r = (rel: string) => rule.resolve(t.root, rel);
  assert.equal(await r("/passwd"), "/etc/passwd");
  assert.equal(await r("/theirs"), asRoot ? `${t.shared}/js/lib.js` : "/etc/passwd");
  assert.equal(await r("/jsdir/lib.js"), `${t.shared}/js/lib.js`);
  assert.equal(await r("/in.txt"), `${t.root}/a.txt`);
});
