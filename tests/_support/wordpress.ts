/**
 * Debian's `wordpress` package set up for one test file (or one bench run): a database in a
 * private MariaDB, a `wp-content` directory of its own (themes linked to the package's), and a
 * configuration file `/etc/wordpress/config-NAME.php` chosen by the `WORDPRESS_CONFIG` FastCGI
 * param (Debian's `wp-config.php` reads it), removed again at the end. The machine's own
 * WordPress sites and `/var/lib/wordpress` are not touched.
 */
import { request } from "./http.ts";
import type { Mariadb } from "./mariadb.ts";

export const WORDPRESS_ROOT = "/usr/share/wordpress";

/** Debian's WordPress and its twentytwentythree theme are installed. */
export function wordpressInstalled(): boolean {
  try {
    Deno.statSync(`${WORDPRESS_ROOT}/wp-config.php`);
    Deno.statSync(`${WORDPRESS_ROOT}/wp-content/themes/twentytwentythree/style.css`);
    return Deno.statSync("/etc/wordpress").isDirectory;
  } catch {
    return false;
  }
}

export interface WordpressSite extends AsyncDisposable {
  /** The `WORDPRESS_CONFIG` value (`/etc/wordpress/config-NAME.php`). */
  readonly name: string;
  /** The directory holding this site's `wp-content` (the root of its `/wp-content` route). */
  readonly content: string;
  /** The FastCGI params the site needs: its config name, and nginx named for permalinks. */
  readonly params: Readonly<Record<string, string>>;
  close(): Promise<void>;
}

/** Creates the database `database` and the site's config file and content directory. */
export async function wordpressSite(db: Mariadb, database = "wp"): Promise<WordpressSite> {
  const name = `scalwsd-test-${Deno.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const content = await Deno.realPath(await Deno.makeTempDir({ prefix: "scalwsd-wp-" }));
  await Deno.mkdir(`${content}/wp-content/plugins`, { recursive: true });
  await Deno.mkdir(`${content}/wp-content/uploads`);
  await Deno.symlink(`${WORDPRESS_ROOT}/wp-content/themes`, `${content}/wp-content/themes`);
  await db.sql(`CREATE DATABASE \`${database}\`;`);
  const config = `/etc/wordpress/config-${name}.php`;
  await Deno.writeTextFile(
    config,
    `<?php
// Written by scalwsd's tests for one run; removed when the run ends.
define('DB_NAME', '${database}');
define('DB_USER', 'root');
define('DB_PASSWORD', '');
define('DB_HOST', 'localhost:${db.socket}');
define('WP_CONTENT_DIR', '${content}/wp-content');
define('FS_METHOD', 'direct');
define('WP_HTTP_BLOCK_EXTERNAL', true);
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_DEBUG', false);
// The site answers on whatever host and port it is reached by (the bench puts two servers in
// front of one site).
if (isset($_SERVER['HTTP_HOST'])) {
  define('WP_HOME', 'http://' . $_SERVER['HTTP_HOST']);
  define('WP_SITEURL', WP_HOME);
}
`,
  );
  const close = async () => {
    await Deno.remove(config).catch(() => {});
    await Deno.remove(content, { recursive: true }).catch(() => {});
  };
  return {
    name,
    content,
    params: { WORDPRESS_CONFIG: name, SERVER_SOFTWARE: "nginx (scalwsd)" },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The `type: php` runtime of the site, and its `/wp-content` route. */
export function wordpressApp(site: WordpressSite, fastcgi: string, host: string) {
  return {
    name: "wordpress",
    domains: [host],
    runtime: {
      type: "php",
      fastcgi,
      root: WORDPRESS_ROOT,
      front_controller: "/index.php",
      allowed_roots: ["/usr/share/javascript"],
      params: site.params,
    },
    routes: [{
      path: "/wp-content",
      runtime: {
        type: "php",
        fastcgi,
        root: site.content,
        allowed_roots: [`${WORDPRESS_ROOT}/wp-content`],
        params: site.params,
      },
    }],
  };
}

/** Runs the install wizard of a fresh site at `base` (Host `host`): admin / `password`. */
export async function installWordpress(
  base: string,
  host: string,
  password = "scalwsd-Bench-pass-1",
): Promise<void> {
  const res = await request(`${base}/wp-admin/install.php?step=2`, {
    method: "POST",
    headers: { host, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      weblog_title: "scalwsd blog",
      user_name: "admin",
      admin_password: password,
      admin_password2: password,
      pw_weak: "on",
      admin_email: "admin@example.com",
      blog_public: "0",
      language: "",
    }).toString(),
  });
  const text = res.text;
  if (res.status !== 200 || !text.includes("<h1>Success!</h1>")) {
    throw new Error(`WordPress's install failed: ${res.status} ${text.slice(0, 500)}`);
  }
}
