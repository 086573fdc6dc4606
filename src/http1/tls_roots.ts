/**
 * Trust anchors for TLS to members: the system roots plus the pool's CA file.
 *
 * Deno's `caCerts` ADDS to its default store (measured with Deno 2.9.6: a server signed by a
 * CA given only through `DENO_TLS_CA_STORE=system` + `SSL_CERT_FILE` still verifies when
 * `caCerts` names another CA). That default store is Mozilla's bundled list unless
 * `DENO_TLS_CA_STORE` includes `system`. So, unless it does, the system bundle is read here
 * once per `TlsSettings` object (one per pool) and passed along with the CA file. Each new
 * connection then parses those roots again (about 1.2 ms for 144 roots, measured here);
 * setting `DENO_TLS_CA_STORE=system` avoids that cost.
 */

import type { TlsSettings } from "./types.ts";

/** Where distributions keep the PEM bundle of system roots, in search order. */
export const SYSTEM_BUNDLES: readonly string[] = [
  "/etc/ssl/certs/ca-certificates.crt", // Debian, Ubuntu, Alpine, Arch
  "/etc/pki/tls/certs/ca-bundle.crt", // Fedora, RHEL
  "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
  "/etc/ssl/ca-bundle.pem", // openSUSE
  "/etc/ssl/cert.pem", // Alpine, macOS
];

function envGet(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // no --allow-env: behave as if unset
  }
}

/**
 * The system roots to pass as `caCerts`: none when Deno's own store already is the system
 * one, else the first readable of `SSL_CERT_FILE` or `SYSTEM_BUNDLES` (none if unreadable).
 */
export function systemRoots(
  env: (name: string) => string | undefined = envGet,
  read: (path: string) => string = Deno.readTextFileSync,
): string[] {
  const store = env("DENO_TLS_CA_STORE") ?? "";
  if (store.split(",").some((s) => s.trim() === "system")) return [];
  const file = env("SSL_CERT_FILE");
  for (const path of file ? [file] : SYSTEM_BUNDLES) {
    try {
      return [read(path)];
    } catch {
      // try the next location
    }
  }
  return [];
}

const anchors = new WeakMap<TlsSettings, string[]>();

/** `caCerts` for a pool: system roots plus its CA certificates, computed once per object. */
export function caCertsFor(settings: TlsSettings): string[] {
  let certs = anchors.get(settings);
  if (certs === undefined) {
    certs = [...systemRoots(), ...settings.caCerts];
    anchors.set(settings, certs);
  }
  return certs;
}
