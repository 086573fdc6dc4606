/**
 * `follow_symlinks` and `allowed_roots` of `static` and `php` runtimes, end to end: one site
 * per mode over the same tree (links inside the root, into a shared tree, to `/etc/passwd`, to
 * another owner's file), and a PHP site whose scripts and files are links into an allowed tree,
 * as Debian lays out WordPress (`wp-includes/js/underscore.min.js` -> `/usr/share/javascript`).
 */
import assert from "node:assert/strict";
import { chownSync, lchownSync } from "node:fs";
import { request, scalwsYaml, startScalwsd } from "./_support/mod.ts";
import { phpFpmBinary, startPhpFpm } from "./_support/php_fpm.ts";

const NOBODY = 65534;
const asRoot = Deno.uid() === 0;

async function tree() {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "scalwsd-symlinks-" }));
  const root = `${dir}/www`;
  const shared = `${dir}/javascript`;
  await Deno.mkdir(`${root}/js`, { recursive: true });
  await Deno.mkdir(`${shared}/underscore`, { recursive: true });
  await Deno.writeTextFile(`${root}/index.php`, `<?php echo "front " . $_SERVER['SCRIPT_NAME'];`);
  await Deno.writeTextFile(`${root}/a.txt`, "inside");
  await Deno.writeTextFile(`${shared}/underscore/underscore.min.js`, "var _ = 1;");
  await Deno.writeTextFile(`${shared}/tool.php`, `<?php echo "tool " . $_SERVER['SCRIPT_NAME'];`);
  await Deno.writeTextFile(`${dir}/own.txt`, "own");
  await Deno.symlink(`${root}/a.txt`, `${root}/alias.txt`);
  await Deno.symlink("../../javascript/underscore/underscore.min.js", `${root}/js/underscore.js`);
  await Deno.symlink(`${shared}/tool.php`, `${root}/tool.php`);
  await Deno.symlink("/etc/passwd", `${root}/passwd.txt`);
  await Deno.symlink(asRoot ? "/etc/hostname" : "/etc/passwd", `${root}/theirs.txt`);
  await Deno.symlink(`${dir}/own.txt`, `${root}/mine.txt`);
  if (asRoot) {
    // Links owned by nobody: one to a file of nobody's, one to a file of root's.
    lchownSync(`${root}/theirs.txt`, NOBODY, NOBODY);
    lchownSync(`${root}/mine.txt`, NOBODY, NOBODY);
    chownSync(`${dir}/own.txt`, NOBODY, NOBODY);
  }
  return { dir, root, shared, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

Deno.test("static follow_symlinks: inside_root, owner_match, always, and allowed_roots", async () => {
  await using t = await tree();
  const site = (name: string, extra: Record<string, unknown>) => ({
    name,
    domains: [`${name}.test`],
    runtime: { type: "static", root: t.root, ...extra },
  });
  await using s = await startScalwsd(scalwsYaml({
    server: { admin: undefined },
    apps: [
      site("default", {}),
      site("inside", { follow_symlinks: "inside_root", allowed_roots: [t.shared] }),
      site("owner", { follow_symlinks: "owner_match" }),
      site("always", { follow_symlinks: "always" }),
    ],
  }));
  const get = async (host: string, path: string) => {
    const r = await request(s.url + path, { headers: { host: `${host}.test` } });
    return r.status === 200 ? `200 ${r.text}` : String(r.status);
  };
  const passwd = await Deno.readTextFile("/etc/passwd");
  // Today's rule, the default: only links that stay under the root.
  assert.equal(await get("default", "/alias.txt"), "200 inside");
  assert.equal(await get("default", "/passwd.txt"), "404");
  assert.equal(await get("default", "/js/underscore.js"), "404");
  assert.equal(await get("default", "/mine.txt"), "404");
  // An allowed tree is served; /etc/passwd still is not.
  assert.equal(await get("inside", "/js/underscore.js"), "200 var _ = 1;");
  assert.equal(await get("inside", "/alias.txt"), "200 inside");
  assert.equal(await get("inside", "/passwd.txt"), "404");
  // owner_match: the link's owner must own the target.
  assert.equal(await get("owner", "/mine.txt"), "200 own");
  assert.equal(await get("owner", "/theirs.txt"), "404");
  assert.equal(await get("owner", "/js/underscore.js"), "200 var _ = 1;");
  if (!asRoot) assert.equal(await get("owner", "/passwd.txt"), "404");
  // always: nginx's default.
  assert.equal(await get("always", "/passwd.txt"), `200 ${passwd}`);
  assert.equal(await get("always", "/js/underscore.js"), "200 var _ = 1;");
  const js = await request(s.url + "/js/underscore.js", { headers: { host: "always.test" } });
  assert.equal(js.headers.get("content-length"), "10");
});

Deno.test({
  name: "php follow_symlinks: inside_root, owner_match, always, and allowed_roots",
  ignore: phpFpmBinary() === null,
  async fn() {
    await using t = await tree();
    await using fpm = await startPhpFpm();
    const site = (name: string, extra: Record<string, unknown>) => ({
      name,
      domains: [`${name}.test`],
      runtime: {
        type: "php",
        fastcgi: fpm.address,
        root: t.root,
        front_controller: "/index.php",
        ...extra,
      },
    });
    await using s = await startScalwsd(scalwsYaml({
      server: { admin: undefined },
      apps: [
        site("default", {}),
        site("allowed", { allowed_roots: [t.shared] }),
        site("owner", { follow_symlinks: "owner_match" }),
        site("always", { follow_symlinks: "always" }),
      ],
    }));
    const get = async (host: string, path: string) => {
      const r = await request(s.url + path, { headers: { host: `${host}.test` } });
      return `${r.status} ${r.text}`;
    };
    // Refused under the defaults: a missing file for the application, so the front controller.
    assert.equal(await get("default", "/tool.php"), "200 front /index.php");
    assert.equal(await get("default", "/js/underscore.js"), "200 front /index.php");
    assert.equal(await get("default", "/passwd.txt"), "200 front /index.php");
    assert.equal(await get("allowed", "/tool.php"), "200 tool /tool.php");
    assert.equal(await get("allowed", "/js/underscore.js"), "200 var _ = 1;");
    assert.equal(await get("allowed", "/passwd.txt"), "200 front /index.php");
    // owner_match: the link and the script it leads to have one owner (whoever runs the test).
    assert.equal(await get("owner", "/tool.php"), "200 tool /tool.php");
    assert.equal(await get("owner", "/theirs.txt"), "200 front /index.php");
    // always: nginx's default; /etc/passwd is then a static file like any other.
    const passwd = await Deno.readTextFile("/etc/passwd");
    assert.equal(await get("always", "/tool.php"), "200 tool /tool.php");
    assert.equal(await get("always", "/passwd.txt"), `200 ${passwd}`);
  },
});
