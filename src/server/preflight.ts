/**
 * The checks a configuration passes before it is started or reloaded (`preflight`): the
 * certificate and key files it names are read and parsed the way the build will, each failure
 * naming its config path.
 *
 * @module
 */

import type { Config } from "../config/mod.ts";
import type { PemReader } from "../upstream/mod.ts";

/** Reads a file the way a reload would, naming the config path when it fails. */
function pem(
  read: PemReader,
  path: string,
  where: string,
  what: "certificate" | "key",
  errors: string[],
): void {
  let text: string;
  try {
    text = read(path);
  } catch (err) {
    errors.push(`${where}: cannot read "${path}": ${(err as Error).message}`);
    return;
  }
  const marker = what === "certificate" ? "-----BEGIN CERTIFICATE-----" : "PRIVATE KEY-----";
  if (!text.includes(marker)) errors.push(`${where}: "${path}" holds no PEM ${what}`);
}

/**
 * Checks what `scalwsd check` can check beyond the schema without side effects: the CA files of
 * pools and single https upstreams and the remote admin listener's certificates. Returns
 * `PATH: MESSAGE` lines. Files are read with `read` (default `Deno.readTextFileSync`); a build
 * passes its `PemFiles` so that its pools use the text checked here.
 */
export function preflight(cfg: Config, read: PemReader = Deno.readTextFileSync): string[] {
  const errors: string[] = [];
  for (const [name, p] of Object.entries(cfg.upstreams)) {
    if (p.tls?.ca_file) {
      pem(read, p.tls.ca_file, `upstreams.${name}.tls.ca_file`, "certificate", errors);
    }
  }
  cfg.tenants.forEach((t, ti) =>
    t.applications.forEach((a, ai) => {
      const base = `tenants[${ti}].applications[${ai}]`;
      if (a.runtime.type === "proxy" && a.runtime.tls_ca_file) {
        pem(read, a.runtime.tls_ca_file, `${base}.runtime.tls_ca_file`, "certificate", errors);
      }
      a.routes.forEach((r, ri) => {
        if (r.runtime.type === "proxy" && r.runtime.tls_ca_file) {
          pem(
            read,
            r.runtime.tls_ca_file,
            `${base}.routes[${ri}].runtime.tls_ca_file`,
            "certificate",
            errors,
          );
        }
      });
    })
  );
  const remote = cfg.server.admin.remote;
  if (remote) {
    pem(read, remote.tls.cert, "server.admin.remote.tls.cert", "certificate", errors);
    pem(read, remote.tls.key, "server.admin.remote.tls.key", "key", errors);
    pem(read, remote.tls.client_ca, "server.admin.remote.tls.client_ca", "certificate", errors);
  }
  return errors;
}
