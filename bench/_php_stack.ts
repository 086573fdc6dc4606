/**
 * A standing copy of `php_apps.ts`'s stack for manual measurement: MariaDB, WordPress and
 * DokuWiki sites, one PHP-FPM pool (4 static workers over TCP), nginx, and scalwsd configs for
 * N builds (each started by hand). Writes `DIR/stack.json` and waits for SIGINT/SIGTERM.
 *
 *   deno run -A bench/_php_stack.ts DIR main.ts:PORT ...
 */
import { startMariadb } from "../tests/_support/mariadb.ts";
import { startPhpFpm } from "../tests/_support/php_fpm.ts";
import { dokuwikiApp, dokuwikiSite } from "../tests/_support/dokuwiki.ts";
import { installWordpress, wordpressApp, wordpressSite } from "../tests/_support/wordpress.ts";
import { scalwsYaml } from "../tests/_support/yaml.ts";
import { childPids, findExecutable, freePorts, Procs, waitReady } from "./procs.ts";
import { nginxConf } from "./php_apps.ts";

const [dir, ...builds] = Deno.args;
await Deno.mkdir(dir, { recursive: true });
const procs = new Procs();
const db = await startMariadb();
const wp = await wordpressSite(db);
const wiki = await dokuwikiSite();
const fpm = await startPhpFpm({
  children: 4,
  ini: true,
  tcp: true,
  extra: `${wiki.fpmPool}\npm.status_path = /fpm-status\nlisten.backlog = 4096`,
});
const [pn] = freePorts(1);
const info: Record<string, unknown> = { nginxPort: pn, fpm: fpm.address, scalwsd: [] };
for (const b of builds) {
  const [main, port, mport] = b.split(":");
  const yaml = scalwsYaml({
    server: {
      listeners: [{ name: "http", address: `127.0.0.1:${port}` }],
      admin: undefined,
      metrics: { address: `127.0.0.1:${mport}` },
      access_log: "off",
    },
    apps: [wordpressApp(wp, fpm.address, "wp.test"), dokuwikiApp(fpm.address, "wiki.test")].map(
      (a) => ({ ...a, runtime: { ...a.runtime, status_path: "/fpm-status" } }),
    ),
  });
  const conf = `${dir}/scalwsd-${port}.yaml`;
  await Deno.writeTextFile(conf, yaml);
  (info.scalwsd as unknown[]).push({ main, port, conf });
}
await Deno.mkdir(`${dir}/nginx-tmp`, { recursive: true });
await Deno.writeTextFile(
  `${dir}/nginx.conf`,
  nginxConf({ dir, port: pn, fpm: fpm.socket, wpConfig: wp.name, wpContent: wp.content }),
);
const nginxMaster = await procs.spawn(
  "nginx",
  findExecutable("nginx") ?? "/usr/sbin/nginx",
  ["-c", `${dir}/nginx.conf`, "-p", dir],
  `${dir}/nginx.log`,
);
await new Promise((r) => setTimeout(r, 500));
info.nginxWorker = (await childPids(nginxMaster.pid))[0];
await installWordpress(`http://127.0.0.1:${pn}`, "wp.test");
await Deno.writeTextFile(`${dir}/stack.json`, JSON.stringify(info, null, 2));
console.log(JSON.stringify(info));
const stop = Promise.withResolvers<void>();
Deno.addSignalListener("SIGINT", () => stop.resolve());
Deno.addSignalListener("SIGTERM", () => stop.resolve());
await stop.promise;
await procs.stopAll();
await fpm.close();
await wiki.close();
await wp.close();
await db.close();
void waitReady;
