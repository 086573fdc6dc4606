/** Shared shapes of the upstream policies: pure code with injected time and randomness. */

/** What a balancing policy sees of a member. */
export interface Candidate {
  /** Canonical address, the member's identity. */
  readonly address: string;
  /** 1..1000. */
  readonly weight: number;
  /** Requests in flight (until their response body finished). */
  readonly inflight: number;
  /** False while passive or active health keeps the member out. */
  available(now: number): boolean;
}

/** Per-pick inputs. One object can be reused across picks of one request. */
export interface PickContext {
  readonly now: number;
  /** The hash key (header value, client address, ...); undefined or "" means none. */
  readonly key: string | undefined;
  /** Members this request already tried; a policy never returns one of them. */
  readonly tried: ReadonlySet<Candidate> | null;
  /**
   * Optional availability version: a number the caller changes whenever the result of any
   * member's `available(now)` may have changed (an ejection, a restore, the end of a cooldown,
   * an active-check flip); `AvailabilityVersion` keeps one. With it a balancer re-reads every
   * member's availability only when the number changes and its hash cache stays valid; without
   * it (undefined) a balancer re-reads all members of a pool of up to 64 at every pick, and in
   * larger pools polls only the members it knows to be unavailable (see each policy).
   */
  readonly healthVersion?: number;
}

/**
 * A balancing policy built once per member set and replaced whole when the set changes.
 * `pick` returns an available, untried member, or undefined when there is none.
 */
export interface Balancer<M extends Candidate = Candidate> {
  pick(ctx: PickContext): M | undefined;
  /**
   * Tells the balancer that `member.inflight` changed. least_conn keeps an index of the counts
   * and is exact in large pools only when told of every change; other policies ignore it.
   */
  inflightChanged?(member: M): void;
  /**
   * Forgets what the balancer cached about availability (and hash choices): the next pick
   * re-reads every member. For callers that cannot supply `healthVersion`.
   */
  invalidate?(): void;
}
