/**
 * The HTTP-01 challenges being answered (RFC 8555 §8.3): `GET
 * /.well-known/acme-challenge/<token>` on a plain listener, for a domain of some listener's
 * `tls.acme`, answers the token's key authorization while its order is pending. That path of
 * those domains belongs to scalwsd: an unknown token gets 404 and never reaches an
 * application. Other hosts are routed as usual.
 */

export const CHALLENGE_PREFIX = "/.well-known/acme-challenge/";

export class Http01Challenges {
  /** True when some listener has `tls.acme`: only then does the front look at the path. */
  active = false;
  private domains = new Set<string>();
  /** token -> domain and key authorization. */
  private readonly tokens = new Map<string, { domain: string; keyAuthorization: string }>();

  /** The domains of every `tls.acme` (lower-case); replaces the previous set. */
  setDomains(domains: Iterable<string>): void {
    this.domains = new Set([...domains].map((d) => d.toLowerCase()));
    this.active = this.domains.size > 0;
  }

  add(domain: string, token: string, keyAuthorization: string): void {
    this.tokens.set(token, { domain: domain.toLowerCase(), keyAuthorization });
  }

  remove(token: string): void {
    this.tokens.delete(token);
  }

  /** Tokens being answered. */
  get pending(): number {
    return this.tokens.size;
  }

  /**
   * The answer to a request for `host` (lower-case, no port) and `target` (path and query):
   * undefined when not a challenge of an ACME domain (route it), null for 404, else the key
   * authorization to answer with 200.
   */
  answer(host: string, target: string): string | null | undefined {
    if (!target.startsWith(CHALLENGE_PREFIX) || !this.domains.has(host)) return undefined;
    const q = target.indexOf("?");
    const token = target.slice(CHALLENGE_PREFIX.length, q < 0 ? undefined : q);
    const t = this.tokens.get(token);
    return t !== undefined && t.domain === host ? t.keyAuthorization : null;
  }
}
