/**
 * The HTTP-01 challenges being answered (RFC 8555 §8.3): `GET
 * /.well-known/acme-challenge/<token>` on a plain listener, for a domain of some listener's
 * `tls.acme`, answers the token's key authorization while its order is pending. That path of
 * those domains belongs to scalwsd: an unknown token gets 404 and never reaches an
 * application. Other hosts are routed as usual.
 *
 * Instances sharing a state directory (under the controller, on `reusePort` listeners) share
 * their pending tokens: the ordering instance also writes each one to
 * `<state_dir>/acme/challenges/<token>`, and an instance asked for a token it does not hold
 * reads that file, since the CA's request may reach any instance.
 */
import { ensureDir, writeFileAtomic } from "../base/mod.ts";

export const CHALLENGE_PREFIX = "/.well-known/acme-challenge/";

const TOKEN = /^[A-Za-z0-9_-]{1,256}$/;

export class Http01Challenges {
  /** True when some listener has `tls.acme`: only then does the front look at the path. */
  active = false;
  /** Where pending tokens are shared with other instances; null: not shared. */
  sharedDir: string | null = null;
  private domains = new Set<string>();
  /** token -> domain and key authorization. */
  private readonly tokens = new Map<string, { domain: string; keyAuthorization: string }>();

  /** The domains of every `tls.acme` (lower-case); replaces the previous set. */
  setDomains(domains: Iterable<string>): void {
    this.domains = new Set([...domains].map((d) => d.toLowerCase()));
    this.active = this.domains.size > 0;
  }

  /** Answers `token` for `domain` from now on (and shares it, when `sharedDir` is set). */
  async add(domain: string, token: string, keyAuthorization: string): Promise<void> {
    const entry = { domain: domain.toLowerCase(), keyAuthorization };
    this.tokens.set(token, entry);
    const dir = this.sharedDir;
    if (dir !== null && TOKEN.test(token)) {
      await ensureDir(dir);
      await writeFileAtomic(`${dir}/${token}`, JSON.stringify(entry));
    }
  }

  async remove(token: string): Promise<void> {
    this.tokens.delete(token);
    const dir = this.sharedDir;
    if (dir !== null && TOKEN.test(token)) await Deno.remove(`${dir}/${token}`).catch(() => {});
  }

  /** Tokens being answered by this instance. */
  get pending(): number {
    return this.tokens.size;
  }

  /**
   * The answer to a request for `host` (lower-case, no port) and `target` (path and query):
   * undefined when not a challenge of an ACME domain (route it), null when this instance holds
   * no such token, else the key authorization to answer with 200.
   */
  answer(host: string, target: string): string | null | undefined {
    if (!target.startsWith(CHALLENGE_PREFIX) || !this.domains.has(host)) return undefined;
    const t = this.tokens.get(tokenOf(target));
    return t !== undefined && t.domain === host ? t.keyAuthorization : null;
  }

  /** The key authorization another instance shared for `target`'s token and `host`, or null. */
  async shared(host: string, target: string): Promise<string | null> {
    const dir = this.sharedDir;
    const token = tokenOf(target);
    if (dir === null || !TOKEN.test(token)) return null;
    try {
      const t = JSON.parse(await Deno.readTextFile(`${dir}/${token}`));
      return t?.domain === host && typeof t.keyAuthorization === "string"
        ? t.keyAuthorization
        : null;
    } catch {
      return null;
    }
  }
}

function tokenOf(target: string): string {
  const q = target.indexOf("?");
  return target.slice(CHALLENGE_PREFIX.length, q < 0 ? undefined : q);
}
