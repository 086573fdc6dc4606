import type { ProxyRuntime } from "../config/types.ts";
import { send } from "../http1/send.ts";
import type { UpstreamResponse } from "../http1/types.ts";
import { UpstreamError } from "../http1/upstream_error.ts";
import { log } from "../observe/log.ts";
import type { Exchange, Handler } from "../pipeline/exchange.ts";
import { plain } from "../base/plain.ts";
import { type AffinityKey, buildAffinityCookie, readCookie } from "../upstream/affinity.ts";
import { normalizeClientIp } from "../upstream/balance/hash.ts";
import type { Member } from "../upstream/member.ts";
import type { MemberSet, Pool } from "../upstream/pool.ts";
import { type FailureKind, mayRetry } from "../upstream/retry_policy.ts";
import { issueSticky, verifySticky } from "../upstream/sticky.ts";
import type { Clock } from "../base/clock.ts";
import type { PickContext } from "../upstream/types.ts";
import { clientRefusal, reason } from "./proxy_address.ts";
import { prepareBody } from "./proxy_body.ts";
import { Attempt, errorStatus, outbound, toResponse } from "./proxy_common.ts";
import { isWebSocketUpgrade } from "./websocket.ts";

/** Per-pick context, reused across the attempts of one request. */
class Pick implements PickContext {
  tried: Set<Member> | null = null;
  constructor(public now: number, public key: string | undefined, public healthVersion: number) {}
}

/** One attempt on one member: releases its in-flight count when the response body ends. */
class PoolAttempt extends Attempt {
  private open = true;
  /** The answer was good but its body still streams: the body's end decides success. */
  settleOnEnd = false;
  constructor(
    rt: ProxyRuntime,
    ex: Exchange,
    private readonly handler: PoolProxyHandler,
    readonly member: Member,
    readonly epoch: number,
  ) {
    super(rt.connect_timeout, rt.response_timeout, ex.stats, ex);
    member.inflight++;
    handler.pool.set.balancer.inflightChanged?.(member);
  }

  /**
   * Releases the member (idempotent). A streamed body settles a pending verdict: one that broke
   * after the head is a failure, so a member that always cuts its bodies gets ejected.
   */
  protected ended(ok: boolean, cancelled: boolean): void {
    if (!this.open) return;
    this.open = false;
    this.member.inflight--;
    this.handler.pool.set.balancer.inflightChanged?.(this.member);
    if (!this.settleOnEnd || cancelled) return;
    if (ok) this.handler.success(this.member, this.epoch);
    else this.handler.failure(this.member, this.epoch);
  }

  release(): void {
    this.ended(true, false);
  }
}

/** The retry rule's name for where an attempt failed. */
function failureKind(e: UpstreamError): FailureKind {
  if (e.phase === "connect" || (e.phase === "write" && !e.written)) return "connect";
  if (e.phase === "body") return "broken_after_head";
  return e.timeout ? "timeout" : "broken_before_head";
}

/**
 * Proxies to a named pool: chooses a member (sticky pin, affinity cookie, policy), tracks
 * passive health, retries on other members under the spec's rules, and answers with the last
 * failure when every attempt failed.
 */
export class PoolProxyHandler implements Handler {
  constructor(
    readonly runtime: ProxyRuntime,
    readonly pool: Pool,
    private readonly key: AffinityKey,
    private readonly clock: Clock,
    private readonly maxBody: number,
  ) {}

  /** Records a member failure; logs and republishes only when the ejection state flipped. */
  failure(m: Member, epoch: number): void {
    const now = this.clock.now();
    if (m.health.failure(epoch, now, this.pool.settings.passive_health)) {
      this.pool.availability.bump();
      if (m.health.isEjected(now)) this.pool.availability.expireAt(m.health.ejectedUntil);
      m.publishHealth(now);
      if (m.health.isEjected(now)) {
        log("warn", "member_ejected", {
          pool: this.pool.name,
          member: m.address,
          until: new Date(m.health.ejectedUntil).toISOString(),
        });
      }
    }
  }

  /** Records a member success; logs and republishes only when it restored the member. */
  success(m: Member, epoch: number): void {
    const now = this.clock.now();
    if (m.health.success(epoch, now)) {
      this.pool.availability.bump();
      m.publishHealth(now);
      log("info", "member_restored", { pool: this.pool.name, member: m.address });
    }
  }

  /** The hash key of this request for `balance: hash` by header or client address. */
  private hashKey(ex: Exchange): string | undefined {
    const h = this.pool.settings.hash;
    if (h === undefined || h.by === "cookie") return undefined;
    if (h.by === "header") return ex.req.headers.get(h.name) ?? undefined;
    return normalizeClientIp(ex.client);
  }

  /** A member for this attempt, or undefined when every member was tried. */
  private choose(set: MemberSet, pick: Pick, pinned: Member | undefined): Member | undefined {
    const tried = pick.tried;
    if (
      pinned !== undefined && (tried === null || !tried.has(pinned)) && pinned.available(pick.now)
    ) {
      return pinned;
    }
    const m = set.balancer.pick(pick);
    if (m !== undefined) return m;
    // Health alone never refuses traffic: the member ejected longest ago is tried anyway.
    let best: Member | undefined;
    for (const c of set.members) {
      if ((tried !== null && tried.has(c)) || c.available(pick.now)) continue;
      if (best === undefined || c.health.ejectedAt < best.health.ejectedAt) best = c;
    }
    return best;
  }

  /** The spec's retry rules for attempt `i` (0-based) that just failed on `member`. */
  private retry(
    pick: Pick,
    member: Member,
    i: number,
    failure: FailureKind,
    method: string,
    replayable: boolean,
  ): boolean {
    const set = this.pool.set;
    const tried = pick.tried === null ? 1 : pick.tried.size + (pick.tried.has(member) ? 0 : 1);
    return mayRetry({
      attempts: i + 1,
      retries: this.pool.settings.retries,
      memberCount: set.members.length,
      untriedExists: tried < set.members.length,
      sentToClient: false,
      method,
      failure,
      bodyReplayable: replayable,
      websocket: false,
    });
  }

  async handle(ex: Exchange): Promise<Response> {
    const pool = this.pool;
    const set = pool.set;
    const n = set.members.length;
    if (n === 0) {
      ex.status = 503;
      return plain(503, "Service Unavailable: the pool has no members", { "retry-after": "1" });
    }
    const settings = pool.settings;
    const rt = this.runtime;
    // A WebSocket handshake goes to one member, never retried.
    const upgrade = rt.websocket && isWebSocketUpgrade(ex.req);
    const retryable = !upgrade && n > 1 && settings.retries > 0;
    let body = prepareBody(ex.req, this.maxBody, retryable, rt.response_timeout, ex.bodyTimeout);
    if (body instanceof Promise) body = await body;
    if (typeof body === "number") return clientRefusal(ex, body);

    // A valid sticky pin or affinity cookie naming a live member wins over the policy.
    const now = this.clock.now();
    let held: string | undefined;
    let pinned: Member | undefined;
    const hash = settings.hash;
    const sticky = settings.sticky;
    if (sticky !== undefined) {
      const v = readCookie(ex.req.headers.get("cookie"), sticky.cookie);
      const id = v === undefined ? undefined : verifySticky(this.key, v, now);
      if (id !== undefined) {
        held = id;
        pinned = set.byAffinity.get(id);
      }
    } else if (hash !== undefined && hash.by === "cookie") {
      held = readCookie(ex.req.headers.get("cookie"), hash.name);
      if (held !== undefined) pinned = set.byAffinity.get(held);
    }

    const pick = new Pick(now, this.hashKey(ex), pool.availability.current(now));
    const attempts = retryable && body.replayable ? 1 + settings.retries : 1;
    const started = performance.now();
    let lastStatus = 502;
    for (let i = 0; i < attempts; i++) {
      if (i > 0) {
        pick.now = this.clock.now();
        pick.healthVersion = pool.availability.current(pick.now);
      }
      const member = this.choose(set, pick, pinned);
      if (member === undefined) break;
      if (i > 0) pool.countRetry();
      ex.upstreamAttempts++;
      ex.upstreamMember = member.address;
      const attempt = new PoolAttempt(rt, ex, this, member, member.health.begin());
      let res: UpstreamResponse;
      try {
        res = await send(member.conns, outbound(ex, rt, member.authority, body, upgrade), attempt);
      } catch (err) {
        attempt.release();
        if (!(err instanceof UpstreamError)) throw err;
        if (err.kind === "client") {
          // The client's body failed: neutral for the member, never retried.
          return clientRefusal(ex, body.clientFailure(err) || 400);
        }
        member.countAttempt(0);
        this.failure(member, attempt.epoch);
        // Live-traffic connect failures count towards active health's `fall` too.
        if (err.phase === "connect" && pool.prober !== null) pool.prober.record(member, false);
        lastStatus = errorStatus(err);
        if (this.retry(pick, member, i, failureKind(err), ex.req.method, body.replayable)) {
          (pick.tried ??= new Set()).add(member);
          continue;
        }
        break;
      }
      member.countAttempt(res.status);
      const s = res.status;
      if (s === 502 || s === 503 || s === 504) {
        this.failure(member, attempt.epoch);
        if (
          i + 1 < attempts && this.retry(pick, member, i, "status", ex.req.method, body.replayable)
        ) {
          // Another member gets the request; this answer is dropped (released first, so the
          // cancelled body does not count a second failure).
          attempt.release();
          if (res.body instanceof ReadableStream) res.body.cancel().catch(() => {});
          (pick.tried ??= new Set()).add(member);
          lastStatus = s;
          continue;
        }
      } else if (res.body instanceof ReadableStream) {
        attempt.settleOnEnd = true;
      } else {
        this.success(member, attempt.epoch);
      }
      pool.observeDuration((performance.now() - started) / 1000);
      let cookie: string | undefined;
      if (sticky !== undefined) {
        if (held !== member.affinity) {
          cookie = buildAffinityCookie(
            sticky.cookie,
            issueSticky(this.key, member.affinity, this.clock.now(), sticky.ttl),
            Math.floor(sticky.ttl / 1000),
            ex.secure,
          );
        }
      } else if (hash !== undefined && hash.by === "cookie" && held !== member.affinity) {
        cookie = buildAffinityCookie(hash.name, member.affinity, hash.cookie_max_age, ex.secure);
      }
      return toResponse(ex, res, cookie);
    }
    pool.observeDuration((performance.now() - started) / 1000);
    ex.status = lastStatus;
    return plain(lastStatus, reason(lastStatus));
  }
}
