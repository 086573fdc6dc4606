/**
 * Every metric family scalwsd exports (`createMetrics`), registered once per process with its
 * name, help and labels, and the `process_*` families as the Prometheus client libraries name
 * them. `docs/operations.md` lists them; a test compares the two.
 *
 * @module
 */

import process from "node:process";
import { fdCounter } from "./process_fds.ts";
import { type Family, type HistogramSeries, Registry, type Series } from "./metrics.ts";

/** Every metric family scalwsd exports, registered once per process. */
export interface Metrics {
  readonly registry: Registry;
  /** Requests by tenant, application and status class (`2xx` ... `5xx`). */
  readonly requests: Family<Series>;
  readonly requestDuration: Family<HistogramSeries>;
  /** Requests sent again on a fresh connection because a kept-alive one was stale (ADR-0043). */
  readonly staleRetries: Family<Series>;
  /** Upstream attempts by pool, member and class (`2xx` ... `5xx`, `error`). */
  readonly upstreamRequests: Family<Series>;
  /** Time to the response head, retries included. */
  readonly upstreamDuration: Family<HistogramSeries>;
  readonly memberEjected: Family<Series>;
  readonly memberHealthy: Family<Series>;
  readonly poolRetries: Family<Series>;
  readonly poolMembers: Family<Series>;
  /** Member lists a discovery source (DNS, the API) installed, by pool. */
  readonly discoveryUpdates: Family<Series>;
  /** Failed discovery rounds (a failed, empty or NXDOMAIN resolution), by pool. */
  readonly discoveryErrors: Family<Series>;
  readonly inflight: Series;
  readonly generation: Series;
  readonly reloads: Family<Series>;
  /** Event-loop lag p99 in seconds over the last few seconds (set by a `LoopLagMonitor`). */
  readonly loopLagP99: Series;
  /** User plus system CPU time of the process, read at scrape time. */
  readonly cpuSeconds: Series;
  /** Resident set size of the process, read at scrape time. */
  readonly residentBytes: Series;
  /** Cache lookups by tenant, application and result (`hit`, `miss`, `stale`, ...). */
  readonly cacheRequests: Family<Series>;
  /** Entries in the response store (set at scrape time). */
  readonly cacheObjects: Series;
  /** Bytes charged to the response store's budget (set at scrape time). */
  readonly cacheBytes: Series;
  /** Entries evicted by the byte budget or the variant limit (set at scrape time). */
  readonly cacheEvictions: Series;
  /** Answers served from a stored entry without a member request, by the tier it was in. */
  readonly cacheHitsMemory: Series;
  readonly cacheHitsDisk: Series;
  /** Bytes and files of the disk tier, as last measured plus this process's writes since. */
  readonly cacheDiskBytes: Series;
  readonly cacheDiskEntries: Series;
  /** Answers that could not be written to the disk tier (full, read-only, ...). */
  readonly cacheStoreErrors: Series;
  /** End of validity (Unix seconds) of the certificate `tls.acme` serves, by first domain. */
  readonly acmeExpiry: Family<Series>;
  /** ACME orders by first domain and result (`ok`, `error`). */
  readonly acmeOrders: Family<Series>;
  /** Requests waiting inside scalwsd for a FastCGI connection, by upstream. */
  readonly fastcgiQueue: Family<Series>;
  /** Time requests waited for a FastCGI connection (0 when one was free), by upstream. */
  readonly fastcgiQueueWait: Family<HistogramSeries>;
  /** Connections open to a FastCGI upstream, by upstream. */
  readonly fastcgiConnections: Family<Series>;
  /** FastCGI requests whose client went away, by upstream and `when` (queued, running). */
  readonly fastcgiClientGone: Family<Series>;
  /** `limit_req` decisions the shared store (Redis) did not give, by reason. */
  readonly limitsStoreErrors: Family<Series>;
  /** Time for the shared store's `limit_req` decisions, failures included. */
  readonly limitsStoreLatency: Family<HistogramSeries>;
  /** `server.tracing`: finished spans never exported (queue full, export failed). */
  readonly tracingDropped: Family<Series>;
}

function cacheTiers(registry: Registry) {
  const hits = registry.counter(
    "scalws_cache_hits_total",
    "Answers served from a stored entry without a member request (hit, stale, collapsed), by tier.",
    ["tier"],
  );
  return {
    cacheHitsMemory: hits.with("memory"),
    cacheHitsDisk: hits.with("disk"),
    cacheDiskBytes: registry.gauge(
      "scalws_cache_disk_bytes",
      "Bytes of the disk tier's files (host-wide, as last measured plus this process's writes and removals).",
      [],
    ).with(),
    cacheDiskEntries: registry.gauge(
      "scalws_cache_disk_entries",
      "Files of the disk tier (host-wide, as last measured plus this process's writes and removals).",
      [],
    ).with(),
    cacheStoreErrors: registry.counter(
      "scalws_cache_store_errors_total",
      "Answers not written to the disk tier (a full or read-only disk, ...).",
      [],
    ).with(),
  };
}

export function createMetrics(registry = new Registry()): Metrics {
  const inflight = registry.gauge("scalws_inflight_requests", "Client requests in flight.", []);
  const generation = registry.gauge(
    "scalws_config_generation",
    "Number of the configuration generation being served.",
    [],
  );
  // The process families under the names of the Prometheus client libraries.
  const cpuSeconds = registry.counter(
    "process_cpu_seconds_total",
    "Total user and system CPU time spent in seconds.",
    [],
  ).with();
  const residentBytes = registry.gauge(
    "process_resident_memory_bytes",
    "Resident memory size in bytes.",
    [],
  ).with();
  registry.gauge(
    "process_start_time_seconds",
    "Start time of the process since unix epoch in seconds.",
    [],
  ).with().value = Math.round(performance.timeOrigin) / 1000;
  const fds = fdCounter();
  const openFds = fds === null
    ? null
    : registry.gauge("process_open_fds", "Number of open file descriptors.", []).with();
  const maxFds = fds === null
    ? null
    : registry.gauge("process_max_fds", "Maximum number of open file descriptors.", []).with();
  registry.onCollect(() => {
    const u = process.cpuUsage();
    cpuSeconds.value = (u.user + u.system) / 1e6;
    residentBytes.value = Deno.memoryUsage().rss;
    if (fds !== null) {
      openFds!.value = fds.open();
      maxFds!.value = fds.max();
    }
  });
  return {
    registry,
    requests: registry.counter(
      "scalws_http_requests_total",
      "Client requests by tenant, application and status class.",
      ["tenant", "app", "class"],
    ),
    requestDuration: registry.histogram(
      "scalws_http_request_duration_seconds",
      "Time from request to response head, by tenant and application.",
      ["tenant", "app"],
    ),
    staleRetries: registry.counter(
      "scalws_upstream_retries_total",
      "Requests sent again on a fresh connection because a kept-alive connection was stale.",
      ["tenant", "app", "protocol"],
    ),
    upstreamRequests: registry.counter(
      "scalws_upstream_requests_total",
      "Upstream attempts by pool, member and status class.",
      ["pool", "member", "class"],
    ),
    upstreamDuration: registry.histogram(
      "scalws_upstream_request_duration_seconds",
      "Time to the upstream response head, retries included.",
      ["pool"],
    ),
    memberEjected: registry.gauge(
      "scalws_upstream_member_ejected",
      "1 while passive health keeps the member out.",
      ["pool", "member"],
    ),
    memberHealthy: registry.gauge(
      "scalws_upstream_member_healthy",
      "1 when the member is available to new requests (active and passive health).",
      ["pool", "member"],
    ),
    poolRetries: registry.counter(
      "scalws_upstream_pool_retries_total",
      "Requests sent to another member of the pool.",
      ["pool"],
    ),
    poolMembers: registry.gauge("scalws_upstream_members", "Members of the pool.", ["pool"]),
    discoveryUpdates: registry.counter(
      "scalws_upstream_discovery_updates_total",
      "Member lists installed by a discovery source (DNS, PUT), by pool.",
      ["pool"],
    ),
    discoveryErrors: registry.counter(
      "scalws_upstream_discovery_errors_total",
      "Failed member discovery rounds (failed, empty or NXDOMAIN resolutions), by pool.",
      ["pool"],
    ),
    inflight: inflight.with(),
    generation: generation.with(),
    reloads: registry.counter(
      "scalws_config_reloads_total",
      "Configuration reloads by result (ok, error).",
      ["result"],
    ),
    loopLagP99: registry.gauge(
      "scalws_event_loop_lag_p99_seconds",
      "99th percentile of event-loop lag over the last 5 seconds.",
      [],
    ).with(),
    cpuSeconds,
    residentBytes,
    cacheRequests: registry.counter(
      "scalws_cache_requests_total",
      "Requests on cached routes by tenant, application and cache result.",
      ["tenant", "app", "result"],
    ),
    cacheObjects: registry.gauge(
      "scalws_cache_objects",
      "Responses held in the cache.",
      [],
    ).with(),
    cacheBytes: registry.gauge(
      "scalws_cache_bytes",
      "Bytes held in the cache, headers and bookkeeping included.",
      [],
    ).with(),
    cacheEvictions: registry.counter(
      "scalws_cache_evictions_total",
      "Cached responses evicted to stay within max_size or the variant limit.",
      [],
    ).with(),
    ...cacheTiers(registry),
    acmeExpiry: registry.gauge(
      "scalws_acme_certificate_expiry_timestamp_seconds",
      "End of validity of the certificate ordered by tls.acme, in Unix seconds, by first domain.",
      ["domain"],
    ),
    acmeOrders: registry.counter(
      "scalws_acme_orders_total",
      "ACME certificate orders by first domain and result (ok, error).",
      ["domain", "result"],
    ),
    fastcgiQueue: registry.gauge(
      "scalws_fastcgi_queue_length",
      "Requests waiting inside scalwsd for a FastCGI connection (max_conns reached).",
      ["upstream"],
    ),
    fastcgiQueueWait: registry.histogram(
      "scalws_fastcgi_queue_wait_seconds",
      "Time requests waited for a FastCGI connection, 0 when one was free.",
      ["upstream"],
    ),
    fastcgiConnections: registry.gauge(
      "scalws_fastcgi_connections",
      "Connections open to a FastCGI upstream (at most its max_conns).",
      ["upstream"],
    ),
    fastcgiClientGone: registry.counter(
      "scalws_fastcgi_client_gone_total",
      "FastCGI requests whose client went away: dropped from the queue, or aborted while the application ran.",
      ["upstream", "when"],
    ),
    limitsStoreErrors: registry.counter(
      "scalws_limits_store_errors_total",
      "limit_req decisions the shared store did not give (timeout, connect, down, closed, " +
        "protocol, script), each answered by on_error.",
      ["reason"],
    ),
    limitsStoreLatency: registry.histogram(
      "scalws_limits_store_latency_seconds",
      "Time to get a limit_req decision from the shared store, failures included.",
      [],
      [0.0002, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
    ),
    tracingDropped: registry.counter(
      "scalws_tracing_spans_dropped_total",
      "Finished spans dropped instead of exported: the queue was full (the collector slow or " +
        "down) or their export failed.",
      [],
    ),
  };
}

/** `2xx`..`5xx` for a status code. */
export function statusClass(status: number): string {
  return status < 200
    ? "1xx"
    : status < 300
    ? "2xx"
    : status < 400
    ? "3xx"
    : status < 500
    ? "4xx"
    : "5xx";
}
