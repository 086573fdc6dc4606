/**
 * Debian's PHP-FPM started by a test: a pool file written into a temporary directory, a Unix
 * socket beside it, no php.ini (`-n`) unless asked, errors to FCGI_STDERR. Stopped with `await using`.
 */

/** The PHP-FPM binary (`/usr/sbin/php-fpm8.2` on Debian 12), or null when not installed. */
export function phpFpmBinary(): string | null {
  for (const dir of ["/usr/sbin", "/usr/local/sbin", "/usr/bin"]) {
    let names: string[] = [];
    try {
      names = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
        /^php-fpm[0-9.]*$/.test(n)
      );
    } catch {
      continue;
    }
    // The newest version first: php-fpm8.3 before php-fpm8.2, a bare php-fpm last.
    names.sort().reverse();
    if (names.length > 0) return `${dir}/${names[0]}`;
  }
  return null;
}

export interface PhpFpm extends AsyncDisposable {
  /** The socket path, or `127.0.0.1:PORT` with `tcp`. */
  readonly socket: string;
  /** `unix:` + the socket path, or `127.0.0.1:PORT`. */
  readonly address: string;
  readonly dir: string;
  /** The master process (its children are the workers). */
  readonly pid: number;
  close(): Promise<void>;
}

/** Starts PHP-FPM with `children` static workers; resolves once its socket accepts. */
export async function startPhpFpm(
  options: {
    children?: number;
    extra?: string;
    tcp?: boolean;
    /** Read the system's php.ini and its conf.d (extensions such as mysqli); default false. */
    ini?: boolean;
  } = {},
): Promise<PhpFpm> {
  const bin = phpFpmBinary();
  if (bin === null) throw new Error("php-fpm is not installed (apt-get install php-fpm)");
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-fpm-" });
  let socket = `${dir}/fpm.sock`;
  let port = 0;
  if (options.tcp) {
    // A free loopback port for PHP-FPM (closed just before it binds it).
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    port = (l.addr as Deno.NetAddr).port;
    l.close();
    socket = `127.0.0.1:${port}`;
  }
  await Deno.writeTextFile(
    `${dir}/fpm.conf`,
    [
      "[global]",
      `error_log = ${dir}/fpm.log`,
      "daemonize = no",
      "[www]",
      `listen = ${socket}`,
      "pm = static",
      `pm.max_children = ${options.children ?? 2}`,
      "catch_workers_output = yes",
      // Errors go to FCGI_STDERR (fastcgi.logging) and a fatal one answers 500.
      "php_admin_value[display_errors] = off",
      "php_admin_value[log_errors] = on",
      "php_admin_value[upload_tmp_dir] = " + dir,
      options.extra ?? "",
      "",
    ].join("\n"),
  );
  const root = Deno.uid() === 0 ? ["-R"] : [];
  const child = new Deno.Command(bin, {
    args: [...(options.ini ? [] : ["-n"]), "-F", "-y", `${dir}/fpm.conf`, ...root],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const close = async () => {
    try {
      child.kill("SIGQUIT");
    } catch { /* gone */ }
    await child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  const end = Date.now() + 10_000;
  for (;;) {
    try {
      const c = port > 0
        ? await Deno.connect({ hostname: "127.0.0.1", port })
        : await Deno.connect({ transport: "unix", path: socket });
      c.close();
      break;
    } catch {
      if (Date.now() > end) {
        await close();
        throw new Error("php-fpm did not open its socket within 10 s");
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  const address = port > 0 ? socket : `unix:${socket}`;
  return { socket, address, dir, pid: child.pid, close, [Symbol.asyncDispose]: close };
}
