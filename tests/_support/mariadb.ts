/**
 * A private MariaDB for the real-application tests: a data directory from `mariadb-install-db`
 * (made once, then copied) in a temporary directory (on `/dev/shm` when there is one: MariaDB
 * is mostly waiting on the disk), then `mariadbd` on a Unix socket there, no TCP, as the current
 * user; stopped by its pid with `await using`. Nothing of the machine's own MariaDB is touched.
 */

/** The server binary, or null when `mariadb-server` is not installed. */
export function mariadbBinary(): string | null {
  for (const bin of ["/usr/sbin/mariadbd", "/usr/sbin/mysqld"]) {
    try {
      Deno.statSync(bin);
      return bin;
    } catch { /* next */ }
  }
  return null;
}

export interface Mariadb extends AsyncDisposable {
  /** The server's Unix socket. */
  readonly socket: string;
  /** Runs SQL as root (`mariadb -e`); rejects with the client's error. */
  sql(statements: string): Promise<string>;
  close(): Promise<void>;
}

async function tmpBase(prefix: string): Promise<string> {
  try {
    return await Deno.makeTempDir({ dir: "/dev/shm", prefix });
  } catch {
    return await Deno.makeTempDir({ prefix });
  }
}

async function run(cmd: string, args: string[], stdin?: string): Promise<string> {
  const child = new Deno.Command(cmd, {
    args,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`${cmd} failed: ${new TextDecoder().decode(out.stderr).slice(0, 2000)}`);
  }
  return text;
}

/** Small buffers and no durability: a throwaway database for one test file. */
const SERVER_OPTIONS = [
  "--innodb-buffer-pool-size=32M",
  "--innodb-log-file-size=8M",
  "--innodb-flush-log-at-trx-commit=0",
  "--innodb-doublewrite=0",
  "--skip-name-resolve",
];

/**
 * A data directory fresh from `mariadb-install-db`, installed once per server binary and copied
 * for each use (the install takes 5 to 15 s, a copy a fraction of one): kept beside the
 * temporary directories as `scalwsd-mariadb-template-SIZE-MTIME`, made under another name and
 * renamed into place, so that test files running at once never see half of one.
 */
async function template(server: string, user: string[]): Promise<string> {
  const info = await Deno.stat(server);
  const base = await tmpBase("scalwsd-mariadb-install-");
  const parent = base.slice(0, base.lastIndexOf("/"));
  const path = `${parent}/scalwsd-mariadb-template-${info.size}-${info.mtime?.getTime() ?? 0}`;
  try {
    await Deno.stat(`${path}/mysql`);
    await Deno.remove(base, { recursive: true });
    return path;
  } catch { /* not made yet */ }
  try {
    await run("mariadb-install-db", [
      "--no-defaults",
      `--datadir=${base}/data`,
      "--auth-root-authentication-method=normal",
      "--skip-test-db",
      ...user,
      ...SERVER_OPTIONS,
    ]);
    await Deno.rename(`${base}/data`, path);
  } catch (err) {
    // Another test file made it first: theirs is as good.
    const made = await Deno.stat(`${path}/mysql`).then(() => true, () => false);
    if (!made) throw err;
  } finally {
    await Deno.remove(base, { recursive: true }).catch(() => {});
  }
  return path;
}

/** Installs and starts MariaDB; resolves once it answers on its socket (within 60 s). */
export async function startMariadb(): Promise<Mariadb> {
  const server = mariadbBinary();
  if (server === null) {
    throw new Error("mariadbd is not installed (apt-get install mariadb-server)");
  }
  const dir = await tmpBase("scalwsd-mariadb-");
  const data = `${dir}/data`;
  const socket = `${dir}/mysqld.sock`;
  const user = Deno.uid() === 0 ? ["--user=root"] : [];
  try {
    await Deno.mkdir(data);
    await run("cp", ["-a", `${await template(server, user)}/.`, data]);
  } catch (err) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw err;
  }
  const child = new Deno.Command(server, {
    args: [
      "--no-defaults",
      `--datadir=${data}`,
      `--socket=${socket}`,
      `--pid-file=${dir}/mysqld.pid`,
      `--log-error=${dir}/error.log`,
      "--skip-networking",
      ...user,
      ...SERVER_OPTIONS,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const sql = (statements: string) =>
    run("mariadb", ["--no-defaults", `--socket=${socket}`, "-uroot", "--batch"], statements);
  const close = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* gone */ }
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
    }, 10_000);
    await child.status;
    clearTimeout(timer);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  const end = Date.now() + 60_000;
  for (;;) {
    try {
      await sql("SELECT 1;");
      break;
    } catch (err) {
      if (Date.now() > end) {
        const log = await Deno.readTextFile(`${dir}/error.log`).catch(() => "");
        await close();
        throw new Error(`mariadbd did not answer within 60 s: ${err}\n${log.slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { socket, sql, close, [Symbol.asyncDispose]: close };
}
