/**
 * Checks an issued or stored certificate before it serves: the chain parses, the key belongs
 * to the leaf, the leaf names every domain and has not expired (`config/certificates.ts`, the
 * same checks as a configured certificate).
 */
import { X509Certificate } from "node:crypto";
import { loadCertificate, type LoadedCertificate } from "../config/mod.ts";
import type { StoredCertificate } from "./store.ts";

/** A checked certificate with its start of validity (ms). */
export interface CheckedCertificate {
  readonly loaded: LoadedCertificate;
  readonly notBefore: number;
}

/** The checked certificate, or throws an `Error` whose message says what is wrong. */
export function checkIssued(
  c: StoredCertificate,
  domains: readonly string[],
  where: string,
  now: number,
): CheckedCertificate {
  const errors: string[] = [];
  const warnings: string[] = [];
  const files: Record<string, string> = { cert: c.cert, key: c.key };
  const loaded = loadCertificate(
    { cert: "cert", key: "key", domains },
    where,
    (name) => files[name],
    errors,
    warnings,
    now,
  );
  if (loaded === undefined) throw new Error(errors.join("; "));
  if (loaded.notAfter <= now) throw new Error(`${where}: the certificate has expired`);
  const notBefore = new X509Certificate(c.cert).validFromDate.getTime();
  return { loaded, notBefore };
}
