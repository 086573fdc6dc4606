import type { LoadedCertificate } from "../config/certificates.ts";
import type { KeyPair } from "./deno_internal.ts";

/**
 * The certificates of one TLS listener by name: an exact name first, then a single-label
 * wildcard (`*.example.com` for `a.example.com`), else the first certificate (as nginx's
 * default server does). Also answers whether any certificate names a host, for strict SNI.
 */
export class CertificateSet {
  private readonly exact = new Map<string, KeyPair>();
  private readonly wildcard = new Map<string, KeyPair>();
  private readonly fallback: KeyPair;
  /** Equal for equal certificate sets: a listener is rebound only when it changes. */
  readonly fingerprint: string;

  constructor(certs: readonly LoadedCertificate[]) {
    if (certs.length === 0) throw new Error("a TLS listener needs at least one certificate");
    const pairs = certs.map((c) => ({ cert: c.cert, key: c.key }));
    this.fallback = pairs[0];
    // The first certificate naming a host wins.
    for (let i = 0; i < certs.length; i++) {
      for (const n of certs[i].names) {
        const map = n.startsWith("*.") ? this.wildcard : this.exact;
        const key = n.startsWith("*.") ? n.slice(2) : n;
        if (!map.has(key)) map.set(key, pairs[i]);
      }
    }
    this.fingerprint = JSON.stringify(certs.map((c) => [c.cert, c.key, c.names]));
  }

  private find(name: string): KeyPair | undefined {
    const hit = this.exact.get(name);
    if (hit !== undefined) return hit;
    const dot = name.indexOf(".");
    return dot > 0 ? this.wildcard.get(name.slice(dot + 1)) : undefined;
  }

  /** The certificate for an SNI name ("" when the client sent none). */
  select(sni: string): KeyPair {
    return this.find(sni.toLowerCase()) ?? this.fallback;
  }

  /** Whether a certificate names `host` (lower-case, no port). */
  covers(host: string): boolean {
    return this.find(host) !== undefined;
  }
}
