/**
 * TLS settings towards members, for pools (`scheme`, `tls.ca_file`, `tls.server_name`) and
 * single `https://` addresses (`tls_ca_file`). Certificates are always verified: against the
 * system roots (added once per settings object by the connector) plus the CA file, under the
 * server name (default: the member's host). Build one object per pool and share it across
 * its members, so the roots and the CA file are read once per pool.
 */

import type { AddressTarget, PoolConfig, ProxyRuntime } from "../config/mod.ts";
import type { TlsSettings } from "../http1/mod.ts";

/** Reads a PEM file's text; throws when it cannot be read. */
export type PemReader = (path: string) => string;

function settings(
  scheme: "http" | "https",
  caFile: string | undefined,
  serverName: string,
  read: PemReader,
): TlsSettings | null {
  if (scheme !== "https") return null;
  return { caCerts: caFile ? [read(caFile)] : [], serverName };
}

/**
 * A pool's member TLS: null for `scheme: http`; for `https` the CA file (default none, system
 * roots only) read once with `read`, and `tls.server_name` (default "": the member's host).
 */
export function poolTls(cfg: PoolConfig, read: PemReader): TlsSettings | null {
  return settings(cfg.scheme, cfg.tls?.ca_file, cfg.tls?.server_name ?? "", read);
}

/**
 * A single address's TLS: null for `http://` and `unix:`; for `https://` the runtime's
 * `tls_ca_file` (default none) read with `read`, and the address's host as server name.
 */
export function addressTls(
  target: AddressTarget,
  runtime: ProxyRuntime,
  read: PemReader,
): TlsSettings | null {
  return settings(target.scheme, runtime.tls_ca_file, "", read);
}
