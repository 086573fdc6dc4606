/**
 * `scalwsd run`: starts one instance from a configuration file (the server, the admin listeners,
 * log reopening on SIGUSR1), reloads on SIGHUP and drains on SIGTERM/SIGINT/SIGQUIT, returning the exit
 * status.
 *
 * @module
 */

import { Usr1Watch } from "../src/base/mod.ts";
import { warningsToEventLog } from "./console_warn.ts";
import { ConfigError } from "../src/config/mod.ts";
import { log, LoopLagMonitor, MemoryTrimmer, processReleaser } from "../src/observe/mod.ts";
import { AdminListeners, EarlyMetricsListener } from "../admin/mod.ts";
import { eventLoopSliceAtStart, openFilesAtStart, Server } from "../src/server/mod.ts";
import type { RunOptions } from "./run_options.ts";

/** Exit status of an instance whose drain hit `--drain-timeout` with requests still in flight. */
export const EXIT_DRAIN_TIMEOUT = 3;

/**
 * `scalwsd run --config FILE`: serve until SIGTERM or SIGINT; SIGHUP reloads. Under the
 * controller (`opts.instanceId` set) the listeners are bound only on SIGUSR2 and SIGHUP is
 * ignored: the controller rolls generations instead.
 */
export async function run(
  file: string,
  opts: RunOptions = {},
): Promise<number> {
  const managed = opts.instanceId !== undefined;
  warningsToEventLog();
  // Under the controller /readyz answers "warming" while the generation is prepared.
  let early: EarlyMetricsListener | undefined;
  if (managed && opts.metricsAddress !== undefined) {
    try {
      early = new EarlyMetricsListener(opts.metricsAddress, opts.configGeneration ?? 1);
    } catch (err) {
      console.error(`scalwsd: cannot listen: ${(err as Error).message ?? err}`);
      return 1;
    }
  }
  let server: Server;
  try {
    server = await Server.prepare(file, {
      firstGenerationId: opts.configGeneration,
      ...(opts.controllerSocket === undefined ? {} : { controllerSocket: opts.controllerSocket }),
      ...(opts.baseDir === undefined ? {} : { baseDir: opts.baseDir }),
    });
  } catch (err) {
    await early?.close();
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 1;
    }
    console.error(`scalwsd: ${(err as Error).message ?? err}`);
    return 1;
  }
  // Before binding: a relayed TLS connection holds three descriptors.
  openFilesAtStart(server.generation.config, log);
  // Woken by a socket, the event loop runs before CPU-bound neighbours finish their slices.
  eventLoopSliceAtStart(log);
  const admin = new AdminListeners(
    server,
    managed
      ? {
        socket: opts.adminSocket,
        metrics: opts.metricsAddress,
        skipHostListeners: true,
        ...(early === undefined ? {} : { early }),
      }
      : {},
  );
  // SIGUSR1 is blocked (main.ts, blockUsr1): taken here, it never reaches Deno's inspector.
  const usr1 = new Usr1Watch(() => server.reopenLogs(), 0);
  // The memory trimmer samples from the loop-lag sampler's own wake-ups (no timer of its own);
  // SIGUSR1 is waited for on a thread (no timer at all).
  let trimmer: MemoryTrimmer | null = null;
  const lag = new LoopLagMonitor({
    activity: () => server.requests,
    periodic: () => trimmer?.tick(),
  });
  lag.start();
  server.metrics.registry.onCollect(() => {
    server.metrics.loopLagP99.value = lag.p99Seconds();
  });
  const { promise: stopped, resolve } = Promise.withResolvers<string>();
  // Installed before binding: the default action of these signals would end the process.
  Deno.addSignalListener("SIGHUP", () => {
    server.reopenLogs();
    if (managed) log("warn", "reload_ignored", { reason: "the controller rolls generations" });
    else server.reload();
  });
  Deno.addSignalListener("SIGTERM", () => resolve("SIGTERM"));
  Deno.addSignalListener("SIGINT", () => resolve("SIGINT"));
  // nginx's graceful stop: the same drain (its default action would dump core and exit at once).
  Deno.addSignalListener("SIGQUIT", () => resolve("SIGQUIT"));
  if (!managed) {
    // Only an instance of the controller is activated by SIGUSR2; a stray one (nginx's binary
    // upgrade signal, say) must not end the process by its default action.
    Deno.addSignalListener("SIGUSR2", () => {
      log("warn", "signal_ignored", {
        signal: "SIGUSR2",
        reason: "not an instance of a controller",
      });
    });
  }
  if (managed) {
    // Installed before /readyz can answer: the default action of SIGUSR2 ends the process.
    let activating = false;
    Deno.addSignalListener("SIGUSR2", () => {
      if (activating || server.state !== "ready") return;
      activating = true;
      server.bind().then(
        () =>
          log("info", "activated", { instance: opts.instanceId, generation: server.generation.id }),
        (err) => {
          log("error", "cannot_listen", { error: String((err as Error)?.message ?? err) });
          resolve("bind_failed");
        },
      );
    });
  }
  try {
    if (!managed) await server.bind();
    await admin.start();
  } catch (err) {
    console.error(`scalwsd: cannot listen: ${(err as Error).message ?? err}`);
    // The workers of supervised applications already run: stopped, their directories removed.
    await Promise.race([server.drain(0), new Promise((r) => setTimeout(r, 6_000))]);
    lag.stop();
    usr1.stop();
    return 1;
  }
  const releaser = processReleaser();
  // Start-up garbage (modules, the parsed configuration) goes before the first request.
  releaser.release();
  trimmer = new MemoryTrimmer(() => server.requests, releaser);
  log("info", "started", {
    file,
    generation: server.generation.id,
    pid: Deno.pid,
    memory_release: releaser.describe(),
    ...(managed ? { instance: opts.instanceId, cpus: opts.cpus ?? null, state: server.state } : {}),
  });

  const signal = await stopped;
  // The flag (the controller's drain_timeout) wins over the serving generation's setting.
  const drainTimeout = opts.drainTimeout ?? server.config.server.drain_timeout;
  log("info", "draining", { signal, drain_timeout_ms: drainTimeout });
  // Listening sockets close first (inside drain); /readyz keeps answering "draining" meanwhile.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<false>((r) => timer = setTimeout(() => r(false), drainTimeout));
  const drained = await Promise.race([
    server.drain(drainTimeout).then(() => true as const),
    deadline,
  ]);
  clearTimeout(timer);
  // shutdown() has no deadline of its own and abort() after it crashes: bound the wait, then exit.
  await Promise.race([admin.stop(), new Promise((r) => setTimeout(r, 1_000))]);
  lag.stop();
  usr1.stop();
  if (!drained) {
    log("error", "drain_timeout", {
      drain_timeout_ms: drainTimeout,
      inflight: server.metrics.inflight.value,
    });
    return EXIT_DRAIN_TIMEOUT;
  }
  log("info", "stopped", {});
  return signal === "bind_failed" ? 1 : 0;
}
