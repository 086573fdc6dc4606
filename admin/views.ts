/**
 * The JSON shapes of members and pools that the admin API and `scalwsd ctl` show: a member's state
 * (`healthy`, `ejected`, `probation`, `down`), counters and health, a pool's members and source.
 * Read-only views; nothing here changes a pool.
 *
 * @module
 */

import type { Member, Pool } from "../src/upstream/mod.ts";
import type { MemberSourceView } from "./target.ts";

function iso(ms: number): string | null {
  return ms > 0 ? new Date(ms).toISOString() : null;
}

/** `healthy`, `ejected`, `probation` (cooldown over, waiting for a success) or `down` (active checks). */
export function memberState(m: Member, now: number): string {
  if (m.health.isEjected(now)) return "ejected";
  if (m.active !== null && !m.active.up) return "down";
  if (m.health.probation) return "probation";
  return "healthy";
}

export function memberView(m: Member, now: number): Record<string, unknown> {
  const view: Record<string, unknown> = {
    address: m.address,
    weight: m.weight,
    in_flight: m.inflight,
    failures: m.health.failures,
    ejected_until: m.health.isEjected(now) ? iso(m.health.ejectedUntil) : null,
    state: memberState(m, now),
    requests: m.requestCounts(),
  };
  if (m.active !== null) {
    view.active_health = {
      up: m.active.up,
      last_probe: iso(m.active.lastProbeAt),
      last_result: m.active.lastResult ?? null,
      passes: m.active.passes,
      fails: m.active.fails,
    };
  }
  return view;
}

/**
 * A pool as `GET /v1/upstreams/{name}` shows it (also the answer to a `PUT`); `source` adds
 * where its members come from (`file`, `api`, `dns`, `kubernetes`), `updated_at` (the last
 * change of the list), `last_error` and `last_error_at` (the last failed discovery round).
 */
export function poolView(p: Pool, now: number, source?: MemberSourceView): Record<string, unknown> {
  const s = p.settings;
  const view: Record<string, unknown> = {
    name: s.name,
    members_from: s.members_from,
    source: source?.source ?? s.members_from,
    updated_at: source?.updated === undefined ? null : iso(source.updated),
    last_error: source?.lastError ?? null,
    last_error_at: source?.lastErrorAt === undefined ? null : iso(source.lastErrorAt),
    balance: s.balance,
    protocol: s.protocol,
    scheme: s.scheme,
    retries: s.retries,
    keepalive: s.keepalive,
    passive_health: { failures: s.passive_health.failures, cooldown_ms: s.passive_health.cooldown },
  };
  if (s.hash) view.hash = s.hash;
  if (s.tls) view.tls = s.tls;
  if (s.health_check) view.health_check = s.health_check;
  if (s.sticky) view.sticky = { ttl_ms: s.sticky.ttl, cookie: s.sticky.cookie };
  if (s.dns) view.dns = s.dns;
  view.members = p.set.members.map((m) => memberView(m, now));
  return view;
}
