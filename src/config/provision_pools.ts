/**
 * Provisioning of `upstreams:`: each pool with its defaults, its members, `dns` of a
 * `members_from: dns` pool, `hash` and `sticky`, and the rules between a pool's fields.
 */
import { parseUnit } from "./issues.ts";
import { poolMemberErrors, validateMembers } from "./members.ts";
import { append, type Draft, field, isRecord, type Sink } from "./provision_draft.ts";
import { poolSchema, type RawPool } from "./schema.ts";
import { DEFAULT_MAX_QUEUE } from "./provision_runtimes.ts";
import { nameError } from "./syntax.ts";
import type { DnsConfig, HashConfig, PoolConfig } from "./types.ts";

export const DEFAULT_AFFINITY_COOKIE = "SCALWS_AFFINITY";

export const STICKY_COOKIE_PREFIX = "SCALWS_STICKY_";

export function provisionUpstreams(value: unknown, draft: Draft, sink: Sink): void {
  if (value === undefined) return;
  if (!isRecord(value)) {
    sink.errors.push("upstreams: must be a mapping");
    return;
  }
  for (const name in value) {
    const error = nameError(name);
    if (error !== undefined) {
      sink.errors.push(`upstreams.${name}: ${error}`);
      continue;
    }
    draft.poolNames.add(name);
    const raw = parseUnit(poolSchema, value[name], ["upstreams", name], sink.errors);
    if (raw === undefined) {
      // The member list does not depend on the other keys: report its errors as well.
      const members = field(value[name], "members");
      if (members !== undefined) {
        append(sink.errors, validateMembers(members, `upstreams.${name}`).errors);
      }
      continue;
    }
    const pool = provisionPool(name, raw, sink);
    if (pool !== undefined) draft.pools.set(name, pool);
  }
}

/**
 * Builds one pool with its defaults: members `[]`, `members_from: file`,
 * `balance: round_robin`, passive health 3 failures / 10 s, retries 1, keepalive 32,
 * `scheme: http`; health check 5 s / 3 s / rise 2 / fall 2 when present; sticky cookie
 * `SCALWS_STICKY_<pool>`. Warns about a file pool without members.
 */
export function provisionPool(name: string, raw: RawPool, sink: Sink): PoolConfig | undefined {
  const path = `upstreams.${name}`;
  const before = sink.errors.length;
  const scheme = raw.scheme ?? "http";
  const membersFrom = raw.members_from ?? "file";
  const balance = raw.balance ?? "round_robin";
  const result = validateMembers(raw.members ?? [], path);
  append(sink.errors, result.errors);
  const members = result.members ?? [];
  append(sink.errors, poolMemberErrors(members, scheme, path, raw.protocol ?? "http"));
  if (result.members !== undefined && members.length === 0 && membersFrom === "file") {
    sink.warnings.push(`${path}.members: pool has no members; requests get 503`);
  }

  const dns = provisionDns(raw, path, sink);

  let hash: HashConfig | undefined;
  if (balance === "hash") {
    if (raw.hash === undefined) sink.errors.push(`${path}.hash: is required with balance: hash`);
    else hash = provisionHash(raw.hash, `${path}.hash`, sink);
  } else if (raw.hash !== undefined) {
    sink.errors.push(`${path}.hash: only allowed with balance: hash`);
  }
  const protocol = raw.protocol ?? "http";
  if (protocol === "fastcgi") {
    if (raw.keepalive !== undefined) {
      sink.warnings.push(
        `${path}.keepalive: not used with protocol: fastcgi (a connection per request, closed at its end)`,
      );
    }
    if (raw.scheme === "https") {
      sink.errors.push(`${path}.scheme: not allowed with protocol: fastcgi`);
    }
    if (raw.health_check?.path !== undefined) {
      sink.errors.push(
        `${path}.health_check.path: not allowed with protocol: fastcgi (checks connect only)`,
      );
    }
  } else {
    if (raw.max_queue !== undefined) {
      sink.errors.push(`${path}.max_queue: only allowed with protocol: fastcgi`);
    }
    members.forEach((m, i) => {
      if (m.max_conns !== undefined) {
        sink.errors.push(`${path}.members[${i}].max_conns: only allowed with protocol: fastcgi`);
      }
    });
  }
  if (raw.tls !== undefined && scheme !== "https") {
    sink.errors.push(`${path}.tls: only allowed with scheme: https`);
  }
  const sticky = raw.sticky === undefined ? undefined : {
    ttl: raw.sticky.ttl,
    cookie: raw.sticky.cookie ?? `${STICKY_COOKIE_PREFIX}${name}`,
  };
  if (sticky !== undefined && hash?.by === "cookie" && hash.name === sticky.cookie) {
    sink.errors.push(`${path}.sticky.cookie: must differ from hash.name "${hash.name}"`);
  }
  if (sink.errors.length !== before) return undefined;

  const hc = raw.health_check;
  return {
    name,
    members,
    members_from: membersFrom,
    ...(dns !== undefined ? { dns } : {}),
    balance,
    ...(hash !== undefined ? { hash } : {}),
    passive_health: {
      failures: raw.passive_health?.failures ?? 3,
      cooldown: raw.passive_health?.cooldown ?? 10_000,
    },
    retries: raw.retries ?? 1,
    keepalive: raw.keepalive ?? 32,
    protocol,
    ...(protocol === "fastcgi" ? { max_queue: raw.max_queue ?? DEFAULT_MAX_QUEUE } : {}),
    scheme,
    ...(raw.tls !== undefined ? { tls: { ...raw.tls } } : {}),
    ...(hc !== undefined
      ? {
        health_check: {
          ...(hc.path !== undefined ? { path: hc.path } : {}),
          interval: hc.interval ?? 5_000,
          timeout: hc.timeout ?? 3_000,
          rise: hc.rise ?? 2,
          fall: hc.fall ?? 2,
        },
      }
      : {}),
    ...(sticky !== undefined ? { sticky } : {}),
  };
}

/**
 * `dns` of a `members_from: dns` pool with its defaults: `type: A`, `refresh: ttl`,
 * `min_refresh: 1s`, `max_refresh: 5m`, `grace: 60s`. `port` is required for A and AAAA and
 * refused for SRV; `members` and `dns` exclude each other.
 */
function provisionDns(raw: RawPool, path: string, sink: Sink): DnsConfig | undefined {
  const d = raw.dns;
  if (raw.members_from !== "dns") {
    if (d !== undefined) sink.errors.push(`${path}.dns: only allowed with members_from: dns`);
    return undefined;
  }
  if (raw.members !== undefined) {
    sink.errors.push(`${path}.members: not allowed with members_from: dns`);
  }
  if (d === undefined) {
    sink.errors.push(`${path}.dns: is required with members_from: dns`);
    return undefined;
  }
  const before = sink.errors.length;
  const type = d.type ?? "A";
  if (type === "SRV" && d.port !== undefined) {
    sink.errors.push(`${path}.dns.port: not used with type: SRV (answers carry the port)`);
  } else if (type !== "SRV" && d.port === undefined) {
    sink.errors.push(`${path}.dns.port: is required with type: ${type}`);
  }
  const min = d.min_refresh ?? 1_000;
  const max = d.max_refresh ?? 300_000;
  if (min > max) sink.errors.push(`${path}.dns.min_refresh: must not be above max_refresh`);
  const refresh = d.refresh ?? "ttl";
  if (refresh !== "ttl" && (refresh < min || refresh > max)) {
    sink.errors.push(`${path}.dns.refresh: must be between min_refresh and max_refresh`);
  }
  if (sink.errors.length !== before) return undefined;
  return {
    name: d.name.endsWith(".") ? d.name.slice(0, -1) : d.name,
    type,
    ...(d.port !== undefined ? { port: d.port } : {}),
    refresh,
    min_refresh: min,
    max_refresh: max,
    grace: d.grace ?? 60_000,
  };
}

/**
 * `by: cookie` names the cookie (default `SCALWS_AFFINITY`) and may set `cookie_max_age`
 * (whole seconds, default 0: a session cookie); `by: header` requires `name`; `by: client_ip`
 * takes neither and gets `name: ""`.
 */
function provisionHash(
  raw: NonNullable<RawPool["hash"]>,
  path: string,
  sink: Sink,
): HashConfig | undefined {
  const before = sink.errors.length;
  let name = raw.name ?? "";
  if (raw.by === "cookie") name ||= DEFAULT_AFFINITY_COOKIE;
  else if (raw.by === "header" && raw.name === undefined) {
    sink.errors.push(`${path}.name: is required with by: header`);
  } else if (raw.by === "client_ip" && raw.name !== undefined) {
    sink.errors.push(`${path}.name: not used with by: client_ip`);
  }
  const maxAge = raw.cookie_max_age ?? 0;
  if (raw.cookie_max_age !== undefined && raw.by !== "cookie") {
    sink.errors.push(`${path}.cookie_max_age: only allowed with by: cookie`);
  } else if (maxAge % 1000 !== 0) {
    sink.errors.push(`${path}.cookie_max_age: must be a whole number of seconds`);
  }
  if (sink.errors.length !== before) return undefined;
  return { by: raw.by, name, cookie_max_age: maxAge / 1000 };
}
