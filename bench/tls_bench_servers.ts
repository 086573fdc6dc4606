/**
 * scalwsd and nginx side by side for the TLS benches run as tasks (`tls-scan`, `h2-download`):
 * a directory with both certificates (bench.test, ECDSA P-256 and RSA-2048), nginx's
 * configuration (in the foreground, so that stopping the process it started stops nginx), the
 * two servers started under a `Procs`, and the wait until they listen. What the servers serve
 * stays with each bench.
 */
import { TLS_HOST } from "./configs.ts";
import type { Procs } from "./procs.ts";
import { makeCertificates } from "./tls_load.ts";

const MAIN_TS = new URL("../main.ts", import.meta.url).pathname;

/** A certificate the directory holds: `${dir}/${kind}.pem` and `${dir}/${kind}.key`. */
export type CertName = "ecdsa" | "rsa";

/** Makes both certificates and nginx's temporary directory in `dir`. */
export async function prepareTlsDir(openssl: string, dir: string): Promise<void> {
  await Deno.mkdir(`${dir}/tmp`, { recursive: true });
  await makeCertificates(openssl, dir);
}

/**
 * nginx's configuration: one worker in the foreground (`daemon off`: the process `Procs`
 * started is nginx's master, so stopping it stops nginx), its files in `dir`, and one HTTP/2
 * TLS server for bench.test on 127.0.0.1:`port` with `certificates`, TLS 1.2 and 1.3, then the
 * bench's own `directives` (indented lines of the server block).
 */
export function tlsNginxConf(
  dir: string,
  port: number,
  certificates: readonly CertName[],
  directives: string,
): string {
  const certs = certificates.map((c) =>
    `    ssl_certificate ${dir}/${c}.pem;\n    ssl_certificate_key ${dir}/${c}.key;\n`
  ).join("");
  return `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx.err.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/tmp;
  proxy_temp_path ${dir}/tmp;
  fastcgi_temp_path ${dir}/tmp;
  uwsgi_temp_path ${dir}/tmp;
  scgi_temp_path ${dir}/tmp;
  server {
    listen 127.0.0.1:${port} ssl http2;
    server_name ${TLS_HOST};
${certs}    ssl_protocols TLSv1.2 TLSv1.3;
${directives}
  }
}
`;
}

/** Writes `${dir}/nginx.conf` and starts nginx with it (stderr to `${dir}/n.log`). */
export async function spawnNginx(
  procs: Procs,
  nginx: string,
  dir: string,
  conf: string,
): Promise<Deno.ChildProcess> {
  await Deno.writeTextFile(`${dir}/nginx.conf`, conf);
  return await procs.spawn("nginx", nginx, ["-c", `${dir}/nginx.conf`, "-p", dir], `${dir}/n.log`);
}

/** Writes `${dir}/scalwsd.yaml` and runs scalwsd from source with it (to `${dir}/scalwsd.log`). */
export async function spawnScalwsd(
  procs: Procs,
  dir: string,
  yaml: string,
): Promise<Deno.ChildProcess> {
  await Deno.writeTextFile(`${dir}/scalwsd.yaml`, yaml);
  return await procs.spawn(
    "scalwsd",
    Deno.execPath(),
    ["run", "--allow-all", "--unstable-net", MAIN_TS, "run", "--config", `${dir}/scalwsd.yaml`],
    `${dir}/scalwsd.log`,
  );
}
