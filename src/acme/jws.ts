/**
 * JSON Web Signatures for ACME (RFC 8555 §6.2, RFC 7515 flattened JSON): ES256 with an ECDSA
 * P-256 account key held as a WebCrypto key pair, the public JWK, and its RFC 7638 thumbprint
 * (the second half of every HTTP-01 key authorization).
 */
import { b64url } from "./base64url.ts";

const ALG = { name: "ECDSA", namedCurve: "P-256" } as const;
const SIGN = { name: "ECDSA", hash: "SHA-256" } as const;

/** The public half of a P-256 key as a JWK, members in the order RFC 7638 hashes them. */
export interface EcPublicJwk {
  readonly crv: "P-256";
  readonly kty: "EC";
  readonly x: string;
  readonly y: string;
}

/** An account key: the pair, its public JWK and the JWK's thumbprint. */
export interface AccountKey {
  readonly privateKey: CryptoKey;
  readonly jwk: EcPublicJwk;
  readonly thumbprint: string;
}

/** The flattened JWS an ACME server takes as a request body. */
export interface FlattenedJws {
  readonly protected: string;
  readonly payload: string;
  readonly signature: string;
}

/** Who signs: a new account by its `jwk`, an existing one by its account URL (`kid`). */
export type Signer = { readonly jwk: EcPublicJwk } | { readonly kid: string };

/** A new ES256 account key pair; the private JWK is exportable for storage. */
export async function generateAccountKey(): Promise<{ key: AccountKey; privateJwk: JsonWebKey }> {
  const pair = await crypto.subtle.generateKey(ALG, true, ["sign", "verify"]);
  const privateJwk = await crypto.subtle.exportKey("jwk", pair.privateKey);
  return { key: await importAccountKey(privateJwk), privateJwk };
}

/** An account key from its stored private JWK; throws on anything but a P-256 private key. */
export async function importAccountKey(privateJwk: JsonWebKey): Promise<AccountKey> {
  const { kty, crv, x, y, d } = privateJwk;
  if (kty !== "EC" || crv !== "P-256" || typeof x !== "string" || typeof y !== "string") {
    throw new Error("account key: not an EC P-256 JWK");
  }
  if (typeof d !== "string") throw new Error("account key: the JWK holds no private key");
  const privateKey = await crypto.subtle.importKey(
    "jwk",
    { kty, crv, x, y, d, ext: false },
    ALG,
    false,
    ["sign"],
  );
  const jwk: EcPublicJwk = { crv: "P-256", kty: "EC", x, y };
  return { privateKey, jwk, thumbprint: await thumbprint(jwk) };
}

/** RFC 7638: SHA-256 over the required members in lexical order, base64url. */
export async function thumbprint(jwk: EcPublicJwk): Promise<string> {
  const canonical = `{"crv":"${jwk.crv}","kty":"${jwk.kty}","x":"${jwk.x}","y":"${jwk.y}"}`;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical));
  return b64url(new Uint8Array(digest));
}

/**
 * Signs one ACME request: `payload` JSON, or null for POST-as-GET (an empty payload).
 * The protected header carries `alg`, `nonce`, `url` and `jwk` or `kid`.
 */
export async function signJws(opts: {
  readonly key: AccountKey;
  readonly signer: Signer;
  readonly nonce: string;
  readonly url: string;
  readonly payload: unknown | null;
}): Promise<FlattenedJws> {
  const header = { alg: "ES256", nonce: opts.nonce, url: opts.url, ...opts.signer };
  const protectedB64 = b64url(JSON.stringify(header));
  const payloadB64 = opts.payload === null ? "" : b64url(JSON.stringify(opts.payload));
  // WebCrypto's ECDSA signature is r || s, which is exactly JWS's ES256 form.
  const sig = await crypto.subtle.sign(
    SIGN,
    opts.key.privateKey,
    new TextEncoder().encode(`${protectedB64}.${payloadB64}`),
  );
  return { protected: protectedB64, payload: payloadB64, signature: b64url(new Uint8Array(sig)) };
}

/** The HTTP-01 key authorization of `token` (RFC 8555 §8.1). */
export function keyAuthorization(token: string, key: AccountKey): string {
  return `${token}.${key.thumbprint}`;
}
