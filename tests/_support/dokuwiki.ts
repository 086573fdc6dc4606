/**
 * Debian's `dokuwiki` package set up for one test file (or one bench run): the code stays in
 * `/usr/share/dokuwiki` with its symlinks into `/var/lib/dokuwiki/lib`; the configuration
 * (`DOKU_CONF`, defined by a PHP-FPM `auto_prepend_file` before DokuWiki's own preload) and a copy
 * of the package's data directory live in a temporary directory, so the machine's own wiki is
 * not touched. `$conf['userewrite'] = 1`, with the rewrites of `docs/php.md`.
 */

export const DOKUWIKI_ROOT = "/usr/share/dokuwiki";
const DATA = "/var/lib/dokuwiki/data";

export const WIKI_USER = "editor";
export const WIKI_PASSWORD = "scalwsd-wiki-1";
/** bcrypt of `WIKI_PASSWORD` (`password_hash`, which DokuWiki's plain auth accepts). */
const WIKI_HASH = "$2y$10$hJGRK4EB5L0UQugtEwV1BuTHQZsTrMikwWobuge3hIYo3D6nQ/wEe";

/** Debian's DokuWiki is installed and its data directory can be read (to be copied). */
export function dokuwikiInstalled(): boolean {
  try {
    Deno.statSync(`${DOKUWIKI_ROOT}/doku.php`);
    Deno.statSync(`${DOKUWIKI_ROOT}/lib/tpl/dokuwiki/main.php`);
    // The package's data directory is www-data's, mode 0700: copied only by root or www-data.
    Deno.readDirSync(`${DATA}/pages`);
    return true;
  } catch {
    return false;
  }
}

export interface DokuwikiSite extends AsyncDisposable {
  readonly dir: string;
  /** Lines for the PHP-FPM pool (`startPhpFpm({extra})`): the prepend file. */
  readonly fpmPool: string;
  close(): Promise<void>;
}

export async function dokuwikiSite(): Promise<DokuwikiSite> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "scalwsd-wiki-" }));
  const conf = `${dir}/conf`;
  await Deno.mkdir(conf);
  const cp = await new Deno.Command("cp", { args: ["-a", DATA, `${dir}/data`] }).output();
  if (!cp.success) throw new Error(`copying ${DATA} failed`);
  // A start page: Debian's data has none, and the front page would answer 404.
  await Deno.writeTextFile(
    `${dir}/data/pages/start.txt`,
    "====== scalwsd wiki ======\n\nServed by scalwsd over FastCGI. See [[wiki:syntax]].\n",
  );
  await Deno.writeTextFile(
    `${dir}/prepend.php`,
    `<?php if (!defined('DOKU_CONF')) define('DOKU_CONF', '${conf}/');\n`,
  );
  await Deno.writeTextFile(
    `${conf}/local.php`,
    `<?php
$conf['title'] = 'scalwsd wiki';
$conf['lang'] = 'en';
$conf['savedir'] = '${dir}/data';
$conf['userewrite'] = 1;
$conf['useacl'] = 1;
$conf['superuser'] = '@admin';
$conf['updatecheck'] = 0;
$conf['send404'] = 1;
`,
  );
  await Deno.writeTextFile(
    `${conf}/acl.auth.php`,
    "# acl.auth.php\n*\t@ALL\t1\n*\t@user\t8\n",
  );
  await Deno.writeTextFile(
    `${conf}/users.auth.php`,
    `# users.auth.php\n${WIKI_USER}:${WIKI_HASH}:Test Editor:editor@example.com:user\n`,
  );
  const close = () => Deno.remove(dir, { recursive: true }).catch(() => {});
  return {
    dir,
    fpmPool: `php_admin_value[auto_prepend_file] = ${dir}/prepend.php`,
    close,
    [Symbol.asyncDispose]: close,
  };
}

const rewrite = (match: string, to: string) => ({ rewrite: { regex: { match, to } } });

/** The application of `docs/php.md`'s DokuWiki example, on `fastcgi`. */
export function dokuwikiApp(fastcgi: string, host: string) {
  return {
    name: "dokuwiki",
    domains: [host],
    deny_paths: ["/bin", "/conf", "/data", "/inc", "/vendor", "/install.php"],
    runtime: {
      type: "php",
      fastcgi,
      root: DOKUWIKI_ROOT,
      front_controller: "/doku.php",
      allowed_roots: ["/var/lib/dokuwiki/lib"],
    },
    routes: [
      { path: "/", policies: [rewrite("^/([^.]*)$", "/doku.php?id=$1")] },
      { path: "/_media", policies: [rewrite("^/_media/(.*)$", "/lib/exe/fetch.php?media=$1")] },
      {
        path: "/_detail",
        policies: [rewrite("^/_detail/(.*)$", "/lib/exe/detail.php?media=$1")],
      },
      {
        path: "/_export",
        policies: [rewrite("^/_export/([^/]+)/(.*)$", "/doku.php?do=export_$1&id=$2")],
      },
    ],
  };
}
