/**
 * The certificates of one TLS listener by name (`CertificateSet`): exact name, then a single-label
 * wildcard, else the first; one certificate per key type, chosen by what the ClientHello can use,
 * ECDSA first; and strict SNI's check of a request's host.
 *
 * @module
 */

import type { KeyKind, LoadedCertificate } from "../config/mod.ts";
import {
  OFFERS_SIGS,
  OFFERS_TLS13,
  SIG_ED25519,
  SIG_P256,
  SIG_P384,
  SIG_P521,
  SIG_RSA_PKCS1,
  SIG_RSA_PSS,
  SUITE_ECDSA12,
  SUITE_RSA12,
} from "./client_hello.ts";
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

/** Order of preference between the key types of one name: ECDSA, then Ed25519, then RSA. */
function rank(kind: KeyKind): number {
  return kind === "rsa" ? 2 : kind === "ed25519" ? 1 : 0;
}

const CURVE_SIG: Record<string, number> = {
  "ecdsa-p256": SIG_P256,
  "ecdsa-p384": SIG_P384,
  "ecdsa-p521": SIG_P521,
  ed25519: SIG_ED25519,
};

/**
 * Whether a client that `offers` (client_hello.ts bits) can be served with a key of `kind`:
 * rustls signs with an ECDSA key only in its own curve's scheme, with an RSA key in PSS under
 * TLS 1.3 (PKCS#1 too under 1.2), and under TLS 1.2 the cipher suite names the key type too.
 * A ClientHello without signature_algorithms tells nothing: any kind may do.
 */
export function usable(kind: KeyKind, offers: number): boolean {
  if ((offers & OFFERS_SIGS) === 0) return true;
  const tls13 = (offers & OFFERS_TLS13) !== 0;
  if (kind === "rsa") {
    return tls13
      ? (offers & SIG_RSA_PSS) !== 0
      : (offers & (SIG_RSA_PSS | SIG_RSA_PKCS1)) !== 0 && (offers & SUITE_RSA12) !== 0;
  }
  return (offers & CURVE_SIG[kind]) !== 0 && (tls13 || (offers & SUITE_ECDSA12) !== 0);
}

/**
 * The certificates of one TLS listener by name: an exact name first, then a single-label
 * wildcard (`*.example.com` for `a.example.com`), else the first certificate (as nginx's
 * default server does). A name may have one certificate per key type (RSA, ECDSA, Ed25519):
 * the one the client can use is chosen by its ClientHello, ECDSA first. Also answers, for
 * strict SNI, whether a request's host is served by the certificate its connection got.
 */
export class CertificateSet {
  /** By index: what `indexOf` returns. */
  readonly pairs: readonly KeyPair[];
  private readonly kinds: readonly KeyKind[];
  private readonly names: readonly (readonly string[])[];
  /** Per name, the first certificate of each key type naming it, in configuration order. */
  private readonly exact = new Map<string, number[]>();
  private readonly wildcard = new Map<string, number[]>();
  /** For names no certificate has (and no SNI): the first certificate and its twins. */
  private readonly fallback: readonly number[];
  /** Equal for equal certificate sets: new TLS listeners are bound only when it changes. */
  readonly fingerprint: string;

  constructor(certs: readonly LoadedCertificate[]) {
    if (certs.length === 0) throw new Error("a TLS listener needs at least one certificate");
    this.pairs = certs.map((c) => ({ cert: c.cert, key: c.key }));
    this.kinds = certs.map((c) => c.kind);
    this.names = certs.map((c) => c.names.map((n) => n.toLowerCase()));
    for (let i = 0; i < certs.length; i++) {
      for (const n of this.names[i]) {
        const map = n.startsWith("*.") ? this.wildcard : this.exact;
        const key = n.startsWith("*.") ? n.slice(2) : n;
        const have = map.get(key);
        if (have === undefined) map.set(key, [i]);
        // The first certificate of a key type naming a host wins.
        else if (!have.some((j) => sameType(this.kinds[j], this.kinds[i]))) have.push(i);
      }
    }
    const first = this.names[0].length > 0 ? this.lookup(this.names[0][0]) : undefined;
    this.fallback = first !== undefined && first[0] === 0 ? first : [0];
    this.fingerprint = JSON.stringify(certs.map((c) => [c.cert, c.key, c.names]));
  }

  private lookup(name: string): number[] | undefined {
    if (name.startsWith("*.")) return this.wildcard.get(name.slice(2));
    return this.exact.get(name);
  }

  /** The certificate for `name` and a client that `offers`; -1 when no certificate names it. */
  private find(name: string, offers: number): number {
    const hit = this.exact.get(name);
    const dot = name.indexOf(".");
    const wild = dot > 0 ? this.wildcard.get(name.slice(dot + 1)) : undefined;
    if (hit === undefined) return wild === undefined ? -1 : this.pick(wild, offers);
    if (wild === undefined || hit.length > 1 || usable(this.kinds[hit[0]], offers)) {
      return this.pick(hit, offers);
    }
    // The exact name's only certificate does not suit the client: a wildcard one may.
    const w = this.pick(wild, offers);
    return usable(this.kinds[w], offers) ? w : hit[0];
  }

  /** Of `candidates`, the first usable one of the preferred type; the first when none is. */
  private pick(candidates: readonly number[], offers: number): number {
    if (candidates.length === 1 || offers === 0) return candidates[0];
    let best = -1;
    for (const i of candidates) {
      if (!usable(this.kinds[i], offers)) continue;
      if (best < 0 || rank(this.kinds[i]) < rank(this.kinds[best])) best = i;
    }
    return best < 0 ? candidates[0] : best;
  }

  /**
   * Whether a certificate names `sni` (lower-case); false for "" (no SNI). `tls.unknown_sni:
   * refuse` refuses the others.
   */
  knows(sni: string): boolean {
    return this.find(sni, 0) >= 0;
  }

  /**
   * The index of the certificate for an SNI name ("" when the client sent none) and a client
   * that `offers` (client_hello.ts bits; 0: unknown); the first certificate's (or its twin's of
   * another key type) for names no certificate has.
   */
  indexOf(sni: string, offers = 0): number {
    const i = this.find(sni.toLowerCase(), offers);
    return i < 0 ? this.pick(this.fallback, offers) : i;
  }

  /** The certificate for an SNI name ("" when the client sent none). */
  select(sni: string, offers = 0): KeyPair {
    return this.pairs[this.indexOf(sni, offers)];
  }

  /** Whether a certificate names `host` (lower-case, no port). */
  covers(host: string): boolean {
    return this.find(host, 0) >= 0;
  }

  /**
   * Strict SNI: whether a request for `host` (lower-case, no port) may be answered on a
   * connection opened for `sni` by a client that `offers`: the same name, or a name of the
   * certificate it got.
   */
  serves(sni: string, host: string, offers = 0): boolean {
    return sni === host || named(this.names[this.indexOf(sni, offers)], host);
  }
}

function sameType(a: KeyKind, b: KeyKind): boolean {
  return a === b || (a.startsWith("ecdsa") && b.startsWith("ecdsa"));
}
