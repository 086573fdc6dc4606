/**
 * `basic_auth`: `401` with `WWW-Authenticate: Basic realm="..."` unless the request carries a
 * user and password of `users_file` (bcrypt, checked with bcryptjs). bcrypt is slow on
 * purpose, so a verified `Authorization` value is remembered for `cache_ttl` by its HMAC
 * under a key made at start (never the password itself). Wrong passwords count in a per-source
 * limiter (10 at once, then one every 2 s); past it the source gets `429` with `Retry-After`
 * and no bcrypt work, and each refusal is logged. `Authorization` is removed before the
 * handler unless `pass_credentials`.
 */
import bcrypt from "bcryptjs";
import { createHmac, randomBytes } from "node:crypto";
import type { BasicAuthPolicy } from "../../config/mod.ts";
import { log } from "../../observe/mod.ts";
import type { Clock } from "../../base/mod.ts";
import type { Exchange } from "../exchange.ts";
import type { RateLimiter } from "../rate_limit.ts";
import { editHeaders, requestHeader } from "../request_view.ts";
import { answer, type Policy } from "./policy.ts";

/** Wrong passwords allowed at once per source, and the refill rate afterwards. */
export const AUTH_FAILURES = { rate: 0.5, burst: 9 } as const;
/** Remembered credentials at most; the oldest go first. */
export const AUTH_CACHE_MAX = 10_000;

/** Verifies `password` against a bcrypt `hash` (injected by tests). */
export type Verify = (password: string, hash: string) => Promise<boolean>;

export const bcryptVerify: Verify = (password, hash) =>
  bcrypt.compare(password, hash.startsWith("$2y$") ? "$2b$" + hash.slice(4) : hash);

/** User and password of a `Basic` credential, or null when it is not one. */
export function parseBasic(value: string): { user: string; password: string } | null {
  if (value.length < 7 || value.slice(0, 6).toLowerCase() !== "basic ") return null;
  let raw: string;
  try {
    raw = atob(value.slice(6).trim());
  } catch {
    return null;
  }
  const bytes = Uint8Array.from(raw, (c) => c.charCodeAt(0));
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    text = raw; // latin1, as older clients send it
  }
  const colon = text.indexOf(":");
  if (colon < 0) return null;
  return { user: text.slice(0, colon), password: text.slice(colon + 1) };
}

export interface BasicAuthDeps {
  readonly clock: Clock;
  /** Counts wrong passwords per source. */
  readonly failures: RateLimiter;
  readonly verify?: Verify;
}

/** The per-policy state: remembered credentials, and sources held back. */
export class BasicAuth implements Policy {
  readonly name = "basic_auth";
  private readonly key = randomBytes(32);
  /** HMAC of the `Authorization` value -> expiry (clock ms). */
  private readonly verified = new Map<string, number>();
  /** Source -> until when (clock ms) it is refused without checking. */
  private readonly held = new Map<string, number>();
  private readonly challenge: Record<string, string>;
  private readonly verify: Verify;
  /** A hash of the same cost for unknown users, so they take as long as known ones. */
  private readonly decoy: string;

  constructor(readonly cfg: BasicAuthPolicy, private readonly deps: BasicAuthDeps) {
    this.challenge = { "www-authenticate": `Basic realm="${cfg.realm}"` };
    this.verify = deps.verify ?? bcryptVerify;
    this.decoy = Object.values(cfg.users)[0];
  }

  /** Credentials remembered now (for tests). */
  get remembered(): number {
    return this.verified.size;
  }

  request(ex: Exchange): Response | null | Promise<Response | null> {
    const value = requestHeader(ex, "authorization");
    if (value === null) return answer(ex, 401, "Unauthorized", this.challenge);
    const now = this.deps.clock.now();
    const ttl = this.cfg.cache_ttl;
    let digest = "";
    if (ttl > 0) {
      digest = createHmac("sha256", this.key).update(value).digest("base64");
      const until = this.verified.get(digest);
      if (until !== undefined) {
        if (until > now) return this.pass(ex);
        this.verified.delete(digest);
      }
    }
    const heldUntil = this.held.get(ex.client);
    if (heldUntil !== undefined) {
      if (heldUntil > now) return this.throttled(ex, heldUntil - now);
      this.held.delete(ex.client);
    }
    const cred = parseBasic(value);
    if (cred === null) return this.failed(ex, "", "malformed credentials");
    return this.check(ex, cred.user, cred.password, digest);
  }

  private async check(
    ex: Exchange,
    user: string,
    password: string,
    digest: string,
  ): Promise<Response | null> {
    const hash = Object.hasOwn(this.cfg.users, user) ? this.cfg.users[user] : undefined;
    const ok = await this.verify(password, hash ?? this.decoy);
    if (!ok || hash === undefined) {
      return this.failed(ex, user, hash === undefined ? "unknown user" : "wrong password");
    }
    if (digest !== "") this.remember(digest);
    return this.pass(ex);
  }

  private remember(digest: string): void {
    const v = this.verified;
    if (v.size >= AUTH_CACHE_MAX) {
      const oldest = v.keys().next().value;
      if (oldest !== undefined) v.delete(oldest);
    }
    v.set(digest, this.deps.clock.now() + this.cfg.cache_ttl);
  }

  private pass(ex: Exchange): null {
    if (!this.cfg.pass_credentials) editHeaders(ex).delete("authorization");
    return null;
  }

  private failed(ex: Exchange, user: string, reason: string): Response {
    const wait = this.deps.failures.take(ex.client);
    log("warn", "basic_auth_failed", {
      realm: this.cfg.realm,
      client: ex.client,
      user,
      reason,
      held: wait > 0,
    });
    if (wait > 0) {
      this.held.set(ex.client, this.deps.clock.now() + wait * 1000);
      return this.throttled(ex, wait * 1000);
    }
    return answer(ex, 401, "Unauthorized", this.challenge);
  }

  private throttled(ex: Exchange, ms: number): Response {
    return answer(ex, 429, "Too Many Requests", {
      "retry-after": String(Math.max(1, Math.ceil(ms / 1000))),
    });
  }
}
