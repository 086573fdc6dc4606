/** One request's state across its attempts on a pool (see `Pool.start`). */

import type { Member } from "./member.ts";
import type { MemberSet } from "./member_set.ts";
import type { PickContext } from "./types.ts";

/** What a pool needs to know of a request; an `Exchange` is one. */
export interface RequestFacts {
  /** The method (retry rules) and the headers as received (affinity cookie, hash header). */
  readonly req: {
    readonly method: string;
    readonly headers: { get(name: string): string | null };
  };
  /** The client address after `trusted_proxies` (the `client_ip` hash key). */
  readonly client: string;
  /** The request came over TLS: an affinity cookie gets `Secure`. */
  readonly secure: boolean;
}

/** One attempt on a member, as `Pool.report` sees it. */
export interface MemberTry {
  readonly member: Member;
  /** The member's health epoch when the attempt began. */
  readonly epoch: number;
  /** Set by the caller before reporting an answer: its body still streams. */
  readonly streaming: boolean;
  /** Set by the pool: the verdict on this attempt waits for the end of its body. */
  verdictPending: boolean;
}

/**
 * What the pool decides from, for one request: the member set it started with, the member its
 * affinity cookie holds, what it tried. Also the context of every pick. One object per request,
 * reused across its attempts; `Pool.start` fills it in.
 */
export class PoolRequest implements PickContext {
  now = 0;
  healthVersion = 0;
  /** The hash key (header value or client address); undefined for none. */
  key: string | undefined = undefined;
  tried: Set<Member> | null = null;
  /** The affinity value the request's cookie holds, and the member of `set` it names. */
  held: string | undefined = undefined;
  pinned: Member | undefined = undefined;
  /** Whether a failed attempt may go to another member, before the body's own rule. */
  retryable = false;
  /** Whether the request body can be sent again (set once it is prepared). */
  replayable = false;
  /** Members chosen so far. */
  attempts = 0;
  /** The member of the latest attempt and the health epoch it began in. */
  current: Member | undefined = undefined;
  epoch = 0;
  /** `performance.now()` at the first attempt: the pool's request duration starts there. */
  started = 0;

  constructor(
    /** The member set this request chooses from, whatever replaces it meanwhile. */
    readonly set: MemberSet,
    /** The request (method, TLS), read only when a decision needs it. */
    readonly facts: RequestFacts,
  ) {}
}
