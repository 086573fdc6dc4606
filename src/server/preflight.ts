/**
 * The checks a configuration passes before it is started or reloaded (`preflight`): the
 * certificate and key files it names are read and parsed the way the build will, each failure
 * naming its config path.
 *
 * @module
 */

import type { Config } from "../config/mod.ts";
import { AFFINITY_KEY_MIN_BYTES, keyLength, type PemReader } from "../upstream/mod.ts";

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

/**
 * The problem of `server.affinity_key_file` as a `PATH: MESSAGE` line, or undefined: an
 * existing file must be readable and hold at least 16 bytes (trailing whitespace aside); a
 * missing one must be creatable, so its directory must exist. Creates nothing: the start does.
 * Asked by `scalwsd check` and at start, not by a reload, which keeps the key it has.
 */
export function affinityKeyProblem(cfg: Config): string | undefined {
  const path = cfg.server.affinity_key_file;
  if (path === undefined) return undefined;
  const problem = keyFileProblem(path);
  return problem === undefined ? undefined : `server.affinity_key_file: ${problem}`;
}

function keyFileProblem(path: string): string | undefined {
  let data: Uint8Array;
  try {
    data = Deno.readFileSync(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) {
      return `cannot read "${path}": ${(err as Error).message}`;
    }
    const dir = path.slice(0, path.lastIndexOf("/")) || "/";
    try {
      if (Deno.statSync(dir).isDirectory) return undefined;
      return `cannot create "${path}": ${dir} is not a directory`;
    } catch (e) {
      return `cannot create "${path}": ${(e as Error).message}`;
    }
  }
  const end = keyLength(data);
  return end < AFFINITY_KEY_MIN_BYTES
    ? `"${path}" holds ${end} bytes, at least ${AFFINITY_KEY_MIN_BYTES} needed`
    : undefined;
}
