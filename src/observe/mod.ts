/**
 * Observing scalwsd from outside: the metrics registry and its Prometheus text (`metrics.ts`)
 * with every family scalwsd exports (`families.ts`), the event log (`log.ts`) and the batched
 * access log (`access_log.ts`), event-loop lag, and giving freed memory back to the system. It
 * records; it decides nothing about requests.
 *
 * @module
 */

export { AccessLog } from "./access_log.ts";
export { createMetrics, type Metrics } from "./families.ts";
export { log } from "./log.ts";
export { LoopLagMonitor } from "./loop_lag.ts";
export { processReleaser } from "./memory_release.ts";
export { MemoryTrimmer } from "./memory_trim.ts";
export { EXPOSITION_CONTENT_TYPE, Family, HistogramSeries, Registry, Series } from "./metrics.ts";
