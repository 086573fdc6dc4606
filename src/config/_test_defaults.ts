/**
 * Test support: what provisioning gives a server and a pool that set nothing, as the tests that
 * check defaults expect them (one place, so that a new default is one edit).
 */

/** `server:` with only `listeners` set, but for `listeners`. */
export const SERVER_DEFAULTS = {
  admin: {},
  metrics: {},
  trusted_proxies: [],
  request_id: { header: "X-Request-Id" },
  access_log: "stdout",
  max_body: 10 * 1024 * 1024,
  upstream_client: { keepalive: 32, idle_timeout: 60_000 },
  listener_mode: "shared",
  drain_timeout: 30_000,
  limits: {
    header_read_timeout: 60_000,
    idle_timeout: 75_000,
    body_read_timeout: 60_000,
    max_header_size: 65_536,
    max_header_count: 128,
    max_uri_length: 8_192,
    max_connections: 0,
    max_concurrent_streams: 200,
    max_resets_per_second: 100,
  },
  deny_paths: [],
  include: [],
  cache: { max_size: 256 * 1024 * 1024, heuristic_max: 86_400_000 },
} as const;

/** A pool with only `members` set, but for `name` and `members`. */
export const POOL_DEFAULTS = {
  members_from: "file",
  balance: "round_robin",
  passive_health: { failures: 3, cooldown: 10_000 },
  retries: 1,
  keepalive: 32,
  protocol: "http",
  scheme: "http",
} as const;
