/**
 * The certificates of TLS listeners, read and checked: both PEM files readable, every
 * certificate block parses, the first is X.509 v3 (rustls refuses the rest when the listener
 * binds), the key parses, is of a kind rustls signs with, and belongs to it, and each listed domain is a name of the certificate. `scalwsd check`, every load and every reload run
 * this, so a bad certificate is refused before anything changes.
 */
import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import type { TlsCertificateConfig } from "./types.ts";
import { x509Version } from "./x509_version.ts";

/** A checked certificate, ready for a TLS listener. */
export interface LoadedCertificate {
  /** PEM: the certificate chain as read. */
  readonly cert: string;
  /** PEM: the private key as read. */
  readonly key: string;
  /** Lower-cased names that choose it: `domains`, else its DNS subject alternative names. */
  readonly names: readonly string[];
  /** Milliseconds since the epoch. */
  readonly notAfter: number;
  /** What its key signs with: a name's RSA and ECDSA certificates are chosen between by it. */
  readonly kind: KeyKind;
}

/** The kind of a certificate's key, as rustls signs with it (ECDSA by its curve). */
export type KeyKind = "rsa" | "ecdsa-p256" | "ecdsa-p384" | "ecdsa-p521" | "ed25519";

/** The key type of a kind (`rsa`, `ecdsa`, `ed25519`): one certificate per type and name. */
export function keyType(kind: KeyKind): string {
  return kind.startsWith("ecdsa") ? "ecdsa" : kind;
}

const EC_KINDS: Record<string, KeyKind> = {
  prime256v1: "ecdsa-p256",
  secp384r1: "ecdsa-p384",
  secp521r1: "ecdsa-p521",
};

const TYPE_NAMES: Record<string, string> = { rsa: "RSA", ecdsa: "ECDSA", ed25519: "Ed25519" };

/** The kind of a key `unusableKey` took. */
export function keyKind(key: KeyObject): KeyKind {
  if (key.asymmetricKeyType === "rsa") return "rsa";
  if (key.asymmetricKeyType === "ed25519") return "ed25519";
  return EC_KINDS[key.asymmetricKeyDetails?.namedCurve ?? ""] ?? "ecdsa-p256";
}

/** Reads a text file; throws on failure (`Deno.readTextFileSync` in production). */
export type ReadText = (path: string) => string;

const BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
/**
 * A private key's PEM block (PKCS#8, PKCS#1, SEC1, or encrypted), found also among certificates
 * in one file, as Deno's TLS (rustls-pemfile) and nginx read a combined file.
 */
const KEY_BLOCK = /-----BEGIN ((?:RSA |EC |ENCRYPTED )?PRIVATE KEY)-----[\s\S]*?-----END \1-----/;

/** The curves of ECDSA keys that rustls (aws-lc-rs) signs with, by OpenSSL's names. */
const CURVES: Record<string, string> = {
  prime256v1: "P-256",
  secp384r1: "P-384",
  secp521r1: "P-521",
};

/**
 * Why rustls (aws-lc-rs) would refuse `key` when the listener binds ("failed to parse private
 * key"), or null when it takes it: RSA of 2048 bits or more, ECDSA P-256/P-384/P-521, Ed25519.
 */
export function unusableKey(key: KeyObject): string | null {
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails ?? {};
  if (type === "ed25519") return null;
  if (type === "rsa") {
    const bits = details.modulusLength ?? 0;
    return bits >= 2048 ? null : `an RSA key of ${bits} bits (2048 or more are needed)`;
  }
  if (type === "ec") {
    const curve = details.namedCurve ?? "unknown";
    return curve in CURVES ? null : `an ECDSA key on ${curve} (P-256, P-384 or P-521 are needed)`;
  }
  return `a key of type ${type ?? "unknown"} (RSA, ECDSA or Ed25519 are needed)`;
}

/** DNS names of a certificate's subject alternative names, lower-cased. */
export function dnsNames(cert: X509Certificate): string[] {
  const san = cert.subjectAltName;
  if (san === undefined) return [];
  const names: string[] = [];
  for (const part of san.split(",")) {
    const t = part.trim();
    if (t.startsWith("DNS:")) names.push(t.slice(4).toLowerCase());
  }
  return names;
}

/** Whether `name` (a host or a `*.` domain) is covered by one of the certificate's names. */
export function coveredBy(name: string, certNames: readonly string[]): boolean {
  for (const c of certNames) {
    if (c === name) return true;
    if (c.startsWith("*.") && !name.startsWith("*.")) {
      const dot = name.indexOf(".");
      if (dot > 0 && name.slice(dot + 1) === c.slice(2)) return true;
    }
  }
  return false;
}

function read(
  path: string,
  file: string,
  readText: ReadText,
  errors: string[],
): string | undefined {
  try {
    return readText(file);
  } catch (err) {
    errors.push(`${path}: cannot read "${file}": ${(err as Error).message}`);
    return undefined;
  }
}

/**
 * Reads and checks one certificate of a listener at `path`
 * (`server.listeners[0].tls.certificates[1]`); problems become `PATH: MESSAGE` errors, an
 * expired certificate a warning.
 */
export function loadCertificate(
  entry: TlsCertificateConfig,
  path: string,
  readText: ReadText,
  errors: string[],
  warnings: string[],
  now: number = Date.now(),
): LoadedCertificate | undefined {
  const before = errors.length;
  const certText = read(`${path}.cert`, entry.cert, readText, errors);
  const keyText = read(`${path}.key`, entry.key, readText, errors);
  let leaf: X509Certificate | undefined;
  const chain: X509Certificate[] = [];
  let kind: KeyKind = "ecdsa-p256";
  if (certText !== undefined) {
    const blocks = certText.match(BLOCK) ?? [];
    if (blocks.length === 0) errors.push(`${path}.cert: "${entry.cert}" holds no PEM certificate`);
    for (let i = 0; i < blocks.length; i++) {
      try {
        const c = new X509Certificate(blocks[i]);
        chain.push(c);
        if (i === 0) leaf = c;
      } catch {
        errors.push(`${path}.cert: certificate ${i + 1} in "${entry.cert}" does not parse`);
      }
    }
  }
  if (keyText !== undefined) {
    let key: KeyObject | undefined;
    const block = KEY_BLOCK.exec(keyText);
    if (
      block !== null &&
      (block[1] === "ENCRYPTED PRIVATE KEY" || /Proc-Type:.*ENCRYPTED/.test(block[0]))
    ) {
      errors.push(
        `${path}.key: the private key in "${entry.key}" is encrypted: TLS listeners need it ` +
          "unencrypted (openssl pkey -in KEY -out PLAIN)",
      );
    } else {
      try {
        key = createPrivateKey(block === null ? keyText : block[0]);
      } catch {
        errors.push(`${path}.key: "${entry.key}" holds no valid PEM private key`);
      }
    }
    const unusable = key === undefined ? null : unusableKey(key);
    if (unusable !== null) {
      errors.push(`${path}.key: "${entry.key}" holds ${unusable}: the TLS library refuses it`);
    } else if (key !== undefined && leaf !== undefined && !leaf.checkPrivateKey(key)) {
      errors.push(
        chain.slice(1).some((c) => c.checkPrivateKey(key!))
          ? `${path}.cert: the certificate of the key in "${entry.key}" is not the first in ` +
            `"${entry.cert}": put the server's certificate first, then its chain`
          : `${path}.key: does not belong to the certificate in "${entry.cert}"`,
      );
    } else if (key !== undefined) kind = keyKind(key);
  }
  if (leaf !== undefined) {
    let version: number;
    try {
      version = x509Version(new Uint8Array(leaf.raw));
    } catch {
      version = 0;
    }
    if (version !== 3) {
      errors.push(
        `${path}.cert: the certificate in "${entry.cert}" is ` +
          (version === 0 ? "not readable DER" : `X.509 v${version}`) +
          ": TLS listeners take X.509 v3 only (rustls); a bare `openssl x509 -req` makes v1, " +
          "give it -extfile with subjectAltName=DNS:...",
      );
    }
  }
  if (leaf === undefined || errors.length !== before) return undefined;
  const own = dnsNames(leaf);
  if (leaf.subjectAltName === undefined) {
    warnings.push(
      `${path}.cert: the certificate in "${entry.cert}" has no subject alternative names; ` +
        "clients match names against them only",
    );
  }
  const domains = entry.domains;
  if (domains !== undefined) {
    domains.forEach((d, i) => {
      if (!coveredBy(d, own)) {
        errors.push(`${path}.domains[${i}]: "${d}" is not a name of the certificate`);
      }
    });
    if (errors.length !== before) return undefined;
  }
  const notAfter = leaf.validToDate.getTime();
  if (notAfter < now) {
    warnings.push(`${path}.cert: certificate expired on ${leaf.validToDate.toISOString()}`);
  } else if (leaf.validFromDate.getTime() > now) {
    // Served all the same (as nginx does), but no client accepts it before then.
    warnings.push(
      `${path}.cert: certificate not valid before ${leaf.validFromDate.toISOString()}`,
    );
  }
  return { cert: certText!, key: keyText!, names: domains ?? own, notAfter, kind };
}

/**
 * Loads every certificate of a listener's `tls` at `path` (`server.listeners[0].tls`). The
 * same name listed under `domains` of two certificates of one key type is an error, and so is a certificate
 * every name of which an earlier certificate of the same key type already serves (it would
 * never be chosen; an RSA and an ECDSA certificate for one name are both kept, chosen by what
 * the client offers). Returns undefined when any certificate failed.
 */
export function loadCertificates(
  certificates: readonly TlsCertificateConfig[],
  path: string,
  readText: ReadText,
  errors: string[],
  warnings: string[],
  now: number = Date.now(),
): LoadedCertificate[] | undefined {
  const before = errors.length;
  const loaded: LoadedCertificate[] = [];
  const listed = new Map<string, number>();
  /** By key type and name: the index of the first certificate serving it. */
  const served = new Map<string, number>();
  certificates.forEach((entry, i) => {
    const at = `${path}.certificates[${i}]`;
    const c = loadCertificate(entry, at, readText, errors, warnings, now);
    if (c === undefined) return;
    loaded.push(c);
    const type = keyType(c.kind);
    const twice = errors.length;
    entry.domains?.forEach((d, j) => {
      const first = listed.get(`${type} ${d}`);
      if (first !== undefined) {
        errors.push(`${at}.domains[${j}]: "${d}" is already listed by certificates[${first}]`);
      } else listed.set(`${type} ${d}`, i);
    });
    const earlier = c.names.map((n) => served.get(`${type} ${n}`));
    if (errors.length === twice && c.names.length > 0 && earlier.every((e) => e !== undefined)) {
      const by = [...new Set(earlier)].map((e) => `certificates[${e}] ("${certificates[e!].cert}")`)
        .join(", ");
      errors.push(
        `${at}: every name of "${entry.cert}" (${c.names.join(", ")}) is already served by ` +
          `${by} with an ${TYPE_NAMES[type]} key too: it would never be chosen`,
      );
    }
    for (const n of c.names) {
      if (!served.has(`${type} ${n}`)) served.set(`${type} ${n}`, i);
    }
  });
  return errors.length === before ? loaded : undefined;
}
