/**
 * Session affinity of a pool: which member a request's cookie holds, and the cookie a response
 * sets. Two forms: `sticky` (a signed pin with an expiry) and `balance: hash` by cookie (the
 * member's affinity value itself). Built once per pool; pure apart from the clock time passed in.
 */

import type { PoolConfig } from "../config/mod.ts";
import { type AffinityKey, buildAffinityCookie, readCookie } from "./affinity.ts";
import { issueSticky, verifySticky } from "./sticky.ts";

/** The affinity cookie of one pool. */
export interface SessionAffinity {
  /**
   * The member affinity value the request's `Cookie` header holds: a valid, unexpired pin at
   * `now`, or the hash cookie's value; undefined when there is none.
   */
  held(cookieHeader: string | null, now: number): string | undefined;
  /**
   * The `Set-Cookie` value for an answer from the member with affinity value `member`, or
   * undefined when the request already held that member.
   */
  cookie(held: string | undefined, member: string, secure: boolean): string | undefined;
}

/** `sticky`: pins signed with the process key, valid for `ttl` from their issue. */
class StickyAffinity implements SessionAffinity {
  constructor(
    private readonly name: string,
    private readonly ttl: number,
    private readonly key: AffinityKey,
    private readonly clock: { now(): number },
  ) {}

  held(cookieHeader: string | null, now: number): string | undefined {
    const v = readCookie(cookieHeader, this.name);
    return v === undefined ? undefined : verifySticky(this.key, v, now);
  }

  cookie(held: string | undefined, member: string, secure: boolean): string | undefined {
    if (held === member) return undefined;
    const pin = issueSticky(this.key, member, this.clock.now(), this.ttl);
    return buildAffinityCookie(this.name, pin, Math.floor(this.ttl / 1000), secure);
  }
}

/** `balance: hash` by cookie: the value is the member's affinity value. */
class HashCookieAffinity implements SessionAffinity {
  constructor(private readonly name: string, private readonly maxAge: number) {}

  held(cookieHeader: string | null, _now: number): string | undefined {
    return readCookie(cookieHeader, this.name);
  }

  cookie(held: string | undefined, member: string, secure: boolean): string | undefined {
    return held === member
      ? undefined
      : buildAffinityCookie(this.name, member, this.maxAge, secure);
  }
}

/** What `sessionAffinity` builds from besides the pool's settings. */
export interface SessionAffinityDeps {
  readonly key: AffinityKey;
  /** Time of a pin's issue (ms). */
  readonly clock: { now(): number };
}

/**
 * The pool's session affinity, or null when it has none. `sticky` wins over a hash cookie
 * (the configuration refuses both with the same cookie name).
 */
export function sessionAffinity(
  settings: PoolConfig,
  deps: SessionAffinityDeps,
): SessionAffinity | null {
  const sticky = settings.sticky;
  if (sticky !== undefined) {
    return new StickyAffinity(sticky.cookie, sticky.ttl, deps.key, deps.clock);
  }
  const hash = settings.hash;
  if (hash !== undefined && hash.by === "cookie") {
    return new HashCookieAffinity(hash.name, hash.cookie_max_age);
  }
  return null;
}
