/**
 * Provisioning of `server:`: listeners (TLS, redirects), admin, metrics, limits, the upstream
 * client and the shared cache, with their defaults.
 */
import { isLoopbackAddress } from "./address.ts";
import { provisionRedirect } from "./policies.ts";
import type { Sink } from "./provision_draft.ts";
import type { RawServer } from "./schema.ts";
import type { LimitReqConfig, ServerConfig } from "./types.ts";

/** 10 MiB. */
export const DEFAULT_MAX_BODY = 10 * 1024 * 1024;

/** `server.cache.max_size`: 256 MiB. */
export const DEFAULT_CACHE_SIZE = 256 * 1024 * 1024;

/** `server.cache.disk_max_size` when `server.cache.path` is set: 1 GiB. */
export const DEFAULT_DISK_SIZE = 1024 * 1024 * 1024;

/** `server.cache.heuristic_max`: 1 day. */
export const DEFAULT_HEURISTIC_MAX = 86_400_000;

/** 10 s. */
export const DEFAULT_HANDSHAKE_TIMEOUT = 10_000;

export function provisionServer(raw: RawServer, sink: Sink): ServerConfig {
  const admin = raw.admin ?? {};
  if (admin.http !== undefined && !isLoopbackAddress(admin.http.address)) {
    sink.errors.push(
      "server.admin.http.address: must be a loopback address (127.0.0.0/8, ::1 or localhost)",
    );
  }
  const limits = raw.limits ?? {};
  return {
    listeners: (raw.listeners ?? []).map((l, i) => ({
      name: l.name,
      ...l.address,
      ...(l.redirect !== undefined
        ? {
          redirect: provisionRedirect(
            l.redirect,
            ["server", "listeners", i, "redirect"],
            sink.errors,
          ),
        }
        : {}),
      ...(l.tls !== undefined
        ? {
          tls: {
            certificates: (l.tls.certificates ?? []).map((c) => ({
              cert: c.cert,
              key: c.key,
              ...(c.domains !== undefined ? { domains: c.domains } : {}),
            })),
            ...(l.tls.acme !== undefined
              ? {
                acme: {
                  directory: l.tls.acme.directory,
                  ...(l.tls.acme.email !== undefined ? { email: l.tls.acme.email } : {}),
                  domains: l.tls.acme.domains,
                  ...(l.tls.acme.ca_file !== undefined ? { ca_file: l.tls.acme.ca_file } : {}),
                },
              }
              : {}),
            handshake_timeout: l.tls.handshake_timeout ?? DEFAULT_HANDSHAKE_TIMEOUT,
            strict_sni: l.tls.strict_sni ?? true,
            unknown_sni: l.tls.unknown_sni ?? "first",
          },
        }
        : {}),
    })),
    admin: {
      ...(admin.socket !== undefined ? { socket: admin.socket } : {}),
      ...(admin.remote !== undefined
        ? { remote: { ...admin.remote.address, tls: { ...admin.remote.tls } } }
        : {}),
      ...(admin.http !== undefined
        ? { http: { ...admin.http.address, writes: admin.http.writes ?? false } }
        : {}),
    },
    metrics: raw.metrics?.address !== undefined ? { ...raw.metrics.address } : {},
    trusted_proxies: raw.trusted_proxies ?? [],
    request_id: { header: raw.request_id?.header ?? "X-Request-Id" },
    access_log: raw.access_log ?? "stdout",
    ...(raw.default_host !== undefined ? { default_host: raw.default_host } : {}),
    max_body: raw.max_body ?? DEFAULT_MAX_BODY,
    ...(raw.affinity_key_file !== undefined ? { affinity_key_file: raw.affinity_key_file } : {}),
    ...(raw.state_dir !== undefined ? { state_dir: raw.state_dir } : {}),
    ...(raw.resolver !== undefined ? { resolver: raw.resolver } : {}),
    upstream_client: {
      keepalive: raw.upstream_client?.keepalive ?? 32,
      idle_timeout: raw.upstream_client?.idle_timeout ?? 60_000,
    },
    listener_mode: raw.listener_mode ?? "shared",
    drain_timeout: raw.drain_timeout ?? 30_000,
    limits: {
      header_read_timeout: limits.header_read_timeout ?? 60_000,
      idle_timeout: limits.idle_timeout ?? 75_000,
      body_read_timeout: limits.body_read_timeout ?? 60_000,
      max_header_size: limits.max_header_size ?? 65_536,
      max_header_count: limits.max_header_count ?? 128,
      max_uri_length: limits.max_uri_length ?? 8_192,
      max_connections: limits.max_connections ?? 0,
      max_concurrent_streams: limits.max_concurrent_streams ?? 200,
      max_resets_per_second: limits.max_resets_per_second ?? 100,
    },
    ...(raw.limit_req !== undefined ? { limit_req: limitReq(raw.limit_req) } : {}),
    ...(raw.limit_conn !== undefined ? { limit_conn: raw.limit_conn } : {}),
    ...(raw.limits_store !== undefined
      ? {
        limits_store: {
          redis: {
            address: raw.limits_store.redis.address,
            key_prefix: raw.limits_store.redis.key_prefix ?? "scalws:",
            timeout: raw.limits_store.redis.timeout ?? 50,
          },
          on_error: raw.limits_store.on_error ?? "local",
        },
      }
      : {}),
    ...(raw.tracing !== undefined
      ? {
        tracing: {
          endpoint: raw.tracing.endpoint,
          sample_ratio: raw.tracing.sample_ratio ?? 1,
          service_name: raw.tracing.service_name ?? "scalwsd",
          headers: { ...raw.tracing.headers },
          trust_client: raw.tracing.trust_client ?? false,
          queue_size: raw.tracing.queue_size ?? 2048,
        },
      }
      : {}),
    deny_paths: raw.deny_paths ?? [],
    include: raw.include ?? [],
    cache: {
      max_size: raw.cache?.max_size ?? DEFAULT_CACHE_SIZE,
      heuristic_max: raw.cache?.heuristic_max ?? DEFAULT_HEURISTIC_MAX,
      ...(raw.cache?.path !== undefined
        ? { path: raw.cache.path, disk_max_size: raw.cache.disk_max_size ?? DEFAULT_DISK_SIZE }
        : {}),
    },
  };
}

/** `limit_req` with its default `burst: 0`. */
export function limitReq(raw: NonNullable<RawServer["limit_req"]>): LimitReqConfig {
  return { rate: raw.rate, burst: raw.burst ?? 0 };
}
