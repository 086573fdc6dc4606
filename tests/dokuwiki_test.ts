/**
 * Debian's `dokuwiki` through `type: php` on a private PHP-FPM pool of 4 static workers, from its
 * Debian directories (`lib/tpl` and `lib/plugins` are symlinks into `/var/lib/dokuwiki`, reached
 * through `allowed_roots`), with `userewrite=1` and the rewrites of `docs/php.md`: pages by nice
 * URL, login with cookies, an edit carrying its form token, a media upload served back byte for
 * byte through `/_media/`, and 16 concurrent page views on the 4 workers within 10 s.
 */
import assert from "node:assert/strict";
import { scalwsYaml, startScalwsd } from "./_support/mod.ts";
import { Browser, extract } from "./_support/browser.ts";
import {
  dokuwikiApp,
  dokuwikiInstalled,
  dokuwikiSite,
  WIKI_PASSWORD,
  WIKI_USER,
} from "./_support/dokuwiki.ts";
import { phpFpmBinary, startPhpFpm } from "./_support/php_fpm.ts";

const ignore = phpFpmBinary() === null || !dokuwikiInstalled();

/** `&amp;` in an attribute value, as the browser reads it. */
const unescape = (s: string) => s.replaceAll("&amp;", "&");

Deno.test({
  name: "dokuwiki: Debian's package over a 4-worker PHP-FPM pool, nice URLs, edit and upload",
  ignore,
  async fn(t) {
    await using site = await dokuwikiSite();
    await using fpm = await startPhpFpm({ children: 4, ini: true, extra: site.fpmPool });
    await using s = await startScalwsd(scalwsYaml({
      server: { admin: undefined, default_host: "wiki.test" },
      apps: [dokuwikiApp(fpm.address, "wiki.test")],
    }));
    const b = new Browser(s.url);

    await t.step("pages by nice URL, styles and images through Debian's symlinks", async () => {
      const home = await b.get("/");
      assert.equal(home.status, 200);
      assert.match(home.text, /Served by scalwsd over FastCGI/);
      const syntax = await b.get("/wiki:syntax");
      assert.equal(syntax.status, 200);
      assert.match(syntax.text, /<title>wiki:syntax \[scalwsd wiki\]<\/title>/);
      // DokuWiki writes nice links itself (userewrite=1).
      assert.match(home.text, /href="\/wiki:syntax"/);
      const logo = await b.bytes("/lib/tpl/dokuwiki/images/logo.png");
      assert.equal(logo.status, 200);
      assert.equal(logo.headers.get("content-type"), "image/png");
      assert.deepEqual(
        logo.body,
        await Deno.readFile("/var/lib/dokuwiki/lib/tpl/dokuwiki/images/logo.png"),
      );
      const css = await b.get("/lib/exe/css.php?t=dokuwiki");
      assert.equal(css.status, 200);
      assert.match(css.headers.get("content-type") ?? "", /^text\/css/);
      // deny_paths and Debian's links out of every allowed tree.
      assert.equal((await b.get("/inc/init.php")).status, 404);
      assert.doesNotMatch((await b.get("/.htaccess")).text, /RewriteEngine/);
      const missing = await b.get("/no:such:page");
      assert.equal(missing.status, 404);
      assert.match(missing.text, /This topic does not exist yet/);
    });

    await t.step("login, then an edit with its form token", async () => {
      const form = await b.get("/start?do=login");
      const login = await b.post("/start", {
        sectok: extract(form.text, /name="sectok" value="([0-9a-f]*)"/, "sectok"),
        id: "start",
        do: "login",
        u: WIKI_USER,
        p: WIKI_PASSWORD,
      });
      assert.equal(login.status, 302);
      assert.ok(b.cookies.has("DokuWiki"));
      const edit = await b.get("/playground:scalwsd?do=edit");
      assert.equal(edit.status, 200);
      const field = (name: string) =>
        extract(edit.text, new RegExp(`name="${name}" value="([^"]*)"`), name);
      const action = unescape(
        extract(edit.text, /<form id="dw__editform" action="([^"]+)"/, "the edit form"),
      );
      const text = "====== Hello scalwsd ======\nEdited through **FastCGI**.\n";
      // Without the token DokuWiki refuses the save and keeps the page as it was.
      const forged = await b.post(action, {
        id: "playground:scalwsd",
        wikitext: "forged",
        "do[save]": "1",
        sectok: "0".repeat(32),
      });
      assert.notEqual(forged.status, 302);
      const saved = await b.post(action, {
        sectok: field("sectok"),
        id: "playground:scalwsd",
        rev: field("rev"),
        date: field("date"),
        prefix: field("prefix"),
        suffix: field("suffix"),
        changecheck: field("changecheck"),
        target: field("target"),
        summary: "created by scalwsd's test",
        wikitext: text,
        "do[save]": "1",
      });
      assert.equal(saved.status, 302);
      assert.equal(saved.headers.get("location"), `${s.url}/playground:scalwsd`);
      const page = await new Browser(s.url).get("/playground:scalwsd");
      assert.equal(page.status, 200);
      assert.match(page.text, /<h1[^>]*>Hello scalwsd<\/h1>/);
      assert.match(page.text, /<strong>FastCGI<\/strong>/);
      assert.doesNotMatch(page.text, /forged/);
      const raw = await new Browser(s.url).get("/_export/raw/playground:scalwsd");
      assert.equal(raw.text, text);
    });

    await t.step("a media upload is served back byte for byte through /_media/", async () => {
      const logo = await Deno.readFile("/usr/share/wordpress/wp-admin/images/wordpress-logo.png")
        .catch(() => Deno.readFile("/var/lib/dokuwiki/lib/tpl/dokuwiki/images/logo.png"));
      const page = await b.get("/doku.php?do=media&ns=playground&tab_files=upload");
      assert.equal(page.status, 200);
      const action = unescape(
        extract(page.text, /<form id="dw__upload"[^>]* action="([^"]+)"/, "the upload form"),
      );
      const fd = new FormData();
      fd.append("sectok", extract(page.text, /name="sectok" value="([0-9a-f]+)"/, "sectok"));
      fd.append("ns", "playground");
      fd.append("mediaid", "scalwsd-logo.png");
      fd.append("upload", new Blob([logo], { type: "image/png" }), "logo.png");
      const up = await b.post(action, fd);
      assert.equal(up.status, 200);
      const back = await new Browser(s.url).bytes("/_media/playground:scalwsd-logo.png");
      assert.equal(back.status, 200);
      assert.equal(back.headers.get("content-type"), "image/png");
      assert.deepEqual(back.body, logo);
      const detail = await new Browser(s.url).get("/_detail/playground:scalwsd-logo.png");
      assert.equal(detail.status, 200);
      assert.match(detail.text, /scalwsd-logo\.png/);
    });

    await t.step("16 concurrent page views on 4 workers: all 200 within 10 s", async () => {
      const t0 = performance.now();
      const views = await Promise.all(
        Array.from({ length: 16 }, async () => {
          const res = await fetch(`${s.url}/wiki:syntax`, { signal: AbortSignal.timeout(10_000) });
          return `${res.status} ${(await res.text()).includes("wiki:syntax")}`;
        }),
      );
      assert.deepEqual(views, Array(16).fill("200 true"));
      assert.ok(performance.now() - t0 < 10_000);
    });
  },
});
