/**
 * Debian's `wordpress` through `type: php` on a private PHP-FPM pool of 4 static workers and a
 * private MariaDB on a Unix socket (both started here, once for the file): the install wizard,
 * login with cookies, pretty permalinks and a post reached by one, an upload served back byte for
 * byte, Debian's symlinked scripts (`allowed_roots`), and 16 concurrent front-page views on the
 * 4 workers all answered `200` within 10 s.
 */
import assert from "node:assert/strict";
import { scalwsYaml, startScalwsd } from "./_support/mod.ts";
import { Browser, extract } from "./_support/browser.ts";
import { mariadbBinary, startMariadb } from "./_support/mariadb.ts";
import { phpFpmBinary, startPhpFpm } from "./_support/php_fpm.ts";
import {
  WORDPRESS_ROOT,
  wordpressApp,
  wordpressInstalled,
  wordpressSite,
} from "./_support/wordpress.ts";

const ignore = phpFpmBinary() === null || mariadbBinary() === null || !wordpressInstalled() ||
  Deno.uid() !== 0;

const ADMIN = "admin";
const PASSWORD = "scalwsd-Test-pass-1";

function xmlrpc(method: string, params: string[]): string {
  return `<?xml version="1.0"?><methodCall><methodName>${method}</methodName><params>` +
    params.map((p) => `<param><value>${p}</value></param>`).join("") + `</params></methodCall>`;
}

const str = (s: string) => `<string>${s}</string>`;
const member = (name: string, value: string) =>
  `<member><name>${name}</name><value>${value}</value></member>`;

Deno.test({
  name: "wordpress: Debian's package over a 4-worker PHP-FPM pool, from install to upload",
  ignore,
  async fn(t) {
    const [mariadb, phpFpm] = await Promise.all([
      startMariadb(),
      startPhpFpm({ children: 4, ini: true }),
    ]);
    await using db = mariadb;
    await using fpm = phpFpm;
    await using site = await wordpressSite(db);
    await using s = await startScalwsd(scalwsYaml({
      server: { admin: undefined, default_host: "wp.test" },
      apps: [wordpressApp(site, fpm.address, "wp.test")],
    }));
    const b = new Browser(s.url);

    await t.step("the install wizard creates the site", async () => {
      const form = await b.get("/wp-admin/install.php");
      assert.equal(form.status, 200);
      assert.match(form.text, /<form id="setup" method="post" action="install.php\?step=2"/);
      const done = await b.post("/wp-admin/install.php?step=2", {
        weblog_title: "scalwsd blog",
        user_name: ADMIN,
        admin_password: PASSWORD,
        admin_password2: PASSWORD,
        pw_weak: "on",
        admin_email: "admin@example.com",
        blog_public: "0",
        language: "",
        Submit: "Install WordPress",
      });
      assert.equal(done.status, 200);
      assert.match(done.text, /<h1>Success!<\/h1>/);
      const home = await b.get("/");
      assert.equal(home.status, 200);
      assert.match(home.text, /<title>scalwsd blog<\/title>/);
    });

    await t.step("login sets cookies that open the dashboard", async () => {
      b.cookies.set("wordpress_test_cookie", "WP%20Cookie%20check");
      const login = await b.post("/wp-login.php", {
        log: ADMIN,
        pwd: PASSWORD,
        "wp-submit": "Log In",
        redirect_to: `${s.url}/wp-admin/`,
        testcookie: "1",
      });
      assert.equal(login.status, 302, login.text.slice(0, 300));
      assert.equal(login.headers.get("location"), `${s.url}/wp-admin/`);
      assert.ok([...b.cookies.keys()].some((k) => k.startsWith("wordpress_logged_in_")));
      const dash = await b.get("/wp-admin/");
      assert.equal(dash.status, 200);
      assert.match(dash.text, /<h1>Dashboard<\/h1>/);
      // Without the cookies: to the login page.
      const anon = await new Browser(s.url).get("/wp-admin/");
      assert.equal(anon.status, 302);
      assert.match(anon.headers.get("location") ?? "", /\/wp-login\.php\?redirect_to=/);
    });

    let postId = "";
    await t.step("a post is reached by its pretty permalink", async () => {
      const page = await b.get("/wp-admin/options-permalink.php");
      assert.equal(page.status, 200);
      // SERVER_SOFTWARE names nginx (params): permalinks without /index.php/ are offered.
      assert.match(page.text, /value="\/%postname%\/"/);
      const saved = await b.post("/wp-admin/options-permalink.php", {
        _wpnonce: extract(page.text, /name="_wpnonce" value="([0-9a-f]+)"/, "_wpnonce"),
        _wp_http_referer: "/wp-admin/options-permalink.php",
        selection: "/%postname%/",
        permalink_structure: "/%postname%/",
        category_base: "",
        tag_base: "",
        submit: "Save Changes",
      });
      assert.equal(saved.status, 302);
      // WordPress writes the new rewrite rules on the page it redirects to, as a browser follows.
      const after = await b.get(saved.headers.get("location")!);
      assert.equal(after.status, 200);
      assert.match(after.text, /Permalink structure updated/);
      const made = await b.fetch("/xmlrpc.php", {
        method: "POST",
        headers: { "content-type": "text/xml" },
        body: xmlrpc("wp.newPost", [
          "<int>1</int>",
          str(ADMIN),
          str(PASSWORD),
          `<struct>${
            member("post_title", str("Hello from scalwsd")) +
            member("post_content", str("Served over FastCGI by scalwsd.")) +
            member("post_status", str("publish")) +
            member("post_name", str("hello-scalwsd"))
          }</struct>`,
        ]),
      });
      assert.equal(made.status, 200);
      postId = extract(made.text, /<string>(\d+)<\/string>/, "the new post's id");
      const post = await new Browser(s.url).get("/hello-scalwsd/");
      assert.equal(post.status, 200);
      assert.match(post.text, /Hello from scalwsd/);
      assert.match(post.text, /Served over FastCGI by scalwsd\./);
      const short = await new Browser(s.url).get(`/?p=${postId}`);
      assert.equal(short.status, 301);
      assert.equal(short.headers.get("location"), `${s.url}/hello-scalwsd/`);
      const missing = await new Browser(s.url).get("/no-such-post/");
      assert.equal(missing.status, 404);
    });

    await t.step("an upload is served back byte for byte", async () => {
      const logo = await Deno.readFile(`${WORDPRESS_ROOT}/wp-admin/images/wordpress-logo.png`);
      const page = await b.get("/wp-admin/media-new.php");
      assert.equal(page.status, 200);
      const nonce = extract(page.text, /"_wpnonce":"([0-9a-f]+)"/, "the upload nonce");
      const fd = new FormData();
      fd.append("name", "scalwsd-logo.png");
      fd.append("action", "upload-attachment");
      fd.append("_wpnonce", nonce);
      fd.append("async-upload", new Blob([logo], { type: "image/png" }), "scalwsd-logo.png");
      const up = await b.post("/wp-admin/async-upload.php", fd);
      assert.equal(up.status, 200);
      const answer = JSON.parse(up.text) as { success: boolean; data: { url: string } };
      assert.equal(answer.success, true, up.text.slice(0, 300));
      assert.match(answer.data.url, /\/wp-content\/uploads\/\d{4}\/\d{2}\/scalwsd-logo\.png$/);
      const back = await b.bytes(answer.data.url);
      assert.equal(back.status, 200);
      assert.equal(back.headers.get("content-type"), "image/png");
      assert.deepEqual(back.body, logo);
    });

    await t.step("Debian's symlinks: allowed trees served, the rest refused", async () => {
      const anon = new Browser(s.url);
      const js = await anon.bytes("/wp-includes/js/underscore.min.js");
      assert.equal(js.status, 200);
      assert.equal(js.headers.get("content-type"), "application/javascript");
      assert.deepEqual(
        js.body,
        await Deno.readFile("/usr/share/javascript/underscore/underscore.min.js"),
      );
      const theme = await anon.get("/wp-content/themes/twentytwentythree/style.css");
      assert.equal(theme.status, 200);
      assert.match(theme.text, /Theme Name: Twenty Twenty-Three/);
      // .htaccess links to /etc/wordpress/htaccess: outside every allowed tree.
      const ht = await anon.get("/.htaccess");
      assert.doesNotMatch(ht.text, /RewriteEngine/);
      const cert = await anon.get("/wp-includes/certificates/ca-bundle.crt");
      assert.doesNotMatch(cert.text, /BEGIN CERTIFICATE/);
    });

    await t.step("16 concurrent front-page views on 4 workers: all 200 within 10 s", async () => {
      const t0 = performance.now();
      const views = await Promise.all(
        Array.from({ length: 16 }, async () => {
          const res = await fetch(`${s.url}/`, { signal: AbortSignal.timeout(10_000) });
          const text = await res.text();
          return { status: res.status, ok: text.includes("scalwsd blog") };
        }),
      );
      const ms = performance.now() - t0;
      assert.deepEqual(views.map((v) => v.status), Array(16).fill(200));
      assert.ok(views.every((v) => v.ok));
      assert.ok(ms < 10_000, `${ms} ms`);
    });
  },
});
