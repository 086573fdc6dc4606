import type { LoadedCertificate } from "../config/mod.ts";
import type { KeyPair } from "./deno_internal.ts";

/** Whether `name` (lower-case) is one of `names` or under a single-label wildcard of them. */
function named(names: readonly string[], name: string): boolean {
  const dot = name.indexOf(".");
  for (const n of names) {
    if (n === name) return true;
    if (
      dot > 0 && n.startsWith("*.") && n.length - 2 === name.length - dot - 1 &&
      name.endsWith(n.slice(1))
    ) {
      return true;
    }
  }
  return false;
}

/**
 * The certificates of one TLS listener by name: an exact name first, then a single-label
 * wildcard (`*.example.com` for `a.example.com`), else the first certificate (as nginx's
 * default server does). Also answers, for strict SNI, whether a request's host is served by
 * the certificate its connection's SNI name chose.
 */
export class CertificateSet {
  /** By index: what `indexOf` returns. */
  readonly pairs: readonly KeyPair[];
  private readonly names: readonly (readonly string[])[];
  private readonly exact = new Map<string, number>();
  private readonly wildcard = new Map<string, number>();
  /** Equal for equal certificate sets: new TLS listeners are bound only when it changes. */
  readonly fingerprint: string;

  constructor(certs: readonly LoadedCertificate[]) {
    if (certs.length === 0) throw new Error("a TLS listener needs at least one certificate");
    this.pairs = certs.map((c) => ({ cert: c.cert, key: c.key }));
    this.names = certs.map((c) => c.names.map((n) => n.toLowerCase()));
    // The first certificate naming a host wins.
    for (let i = 0; i < certs.length; i++) {
      for (const n of this.names[i]) {
        const map = n.startsWith("*.") ? this.wildcard : this.exact;
        const key = n.startsWith("*.") ? n.slice(2) : n;
        if (!map.has(key)) map.set(key, i);
      }
    }
    this.fingerprint = JSON.stringify(certs.map((c) => [c.cert, c.key, c.names]));
  }

  private find(name: string): number {
    const hit = this.exact.get(name);
    if (hit !== undefined) return hit;
    const dot = name.indexOf(".");
    return dot > 0 ? this.wildcard.get(name.slice(dot + 1)) ?? -1 : -1;
  }

  /** The index of the certificate for an SNI name ("" when the client sent none): 0 if none. */
  indexOf(sni: string): number {
    const i = this.find(sni.toLowerCase());
    return i < 0 ? 0 : i;
  }

  /** The certificate for an SNI name ("" when the client sent none). */
  select(sni: string): KeyPair {
    return this.pairs[this.indexOf(sni)];
  }

  /** Whether a certificate names `host` (lower-case, no port). */
  covers(host: string): boolean {
    return this.find(host) >= 0;
  }

  /**
   * Strict SNI: whether a request for `host` (lower-case, no port) may be answered on a
   * connection opened for `sni`: the same name, or a name of the certificate `sni` chose.
   */
  serves(sni: string, host: string): boolean {
    return sni === host || named(this.names[this.indexOf(sni)], host);
  }
}
