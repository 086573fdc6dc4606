/**
 * The command line `scalwsd ingress` and `scalwsd gateway` share: the flags both take
 * (`--base-config`, `--config-out`, `--kubeconfig`, `--publish-status-address`, `--help`),
 * usage errors (exit 2), start errors (exit 1), then serving until SIGTERM or SIGINT, logs
 * reopened on SIGUSR1, SIGHUP reopening it and reading the base configuration again, and a drain
 * bounded by 30 s (exit 3 past it).
 */
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { Usr1Watch } from "../src/base/mod.ts";
import { ConfigError } from "../src/config/mod.ts";
import { log } from "../src/observe/mod.ts";
import { warningsToEventLog } from "./console_warn.ts";
import { kubeConnection } from "./kube_connection.ts";
import type { KubeMode, KubeStart } from "./kube_mode.ts";

/** In-flight requests get this long after SIGTERM (the Deployment's grace period is longer). */
const DRAIN_TIMEOUT = 30_000;

const COMMON = {
  "base-config": { type: "string" },
  "config-out": { type: "string" },
  kubeconfig: { type: "string" },
  "publish-status-address": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsOptionsConfig;

/** A mode's own flags' values, by flag name (undefined: not given). */
export type KubeFlags = Readonly<Record<string, string | undefined>>;

/** What `runKubeCommand` needs from a mode. */
export interface KubeCommand {
  /** `ingress` or `gateway`: the subcommand and the prefix of its `<mode>_started` event. */
  readonly mode: string;
  readonly usage: string;
  /** The mode's own string flags. */
  readonly flags: readonly string[];
  /** A usage error in the mode's own flags (exit 2), or undefined. */
  readonly check?: (flags: KubeFlags) => string | undefined;
  readonly start: (common: KubeStart, flags: KubeFlags) => Promise<KubeMode>;
}

/** `scalwsd <mode> ...`: serves until SIGTERM or SIGINT; returns the exit status. */
export async function runKubeCommand(c: KubeCommand, args: string[]): Promise<number> {
  warningsToEventLog();
  const options: ParseArgsOptionsConfig = { ...COMMON };
  for (const f of c.flags) options[f] = { type: "string" };
  let values;
  try {
    ({ values } = parseArgs({ args, options, strict: true }));
  } catch (err) {
    console.error(`scalwsd ${c.mode}: ${(err as Error).message}\n${c.usage}`);
    return 2;
  }
  if (values.help) {
    console.log(c.usage);
    return 0;
  }
  const text = (name: string) => {
    const v = values[name];
    return typeof v === "string" ? v : undefined;
  };
  const baseConfig = text("base-config");
  const configOut = text("config-out");
  if (!baseConfig || !configOut) {
    console.error(`scalwsd ${c.mode}: --base-config and --config-out are required\n${c.usage}`);
    return 2;
  }
  const own: KubeFlags = Object.fromEntries(c.flags.map((f) => [f, text(f)]));
  const wrong = c.check?.(own);
  if (wrong !== undefined) {
    console.error(`scalwsd ${c.mode}: ${wrong}\n${c.usage}`);
    return 2;
  }
  const publish = text("publish-status-address");
  let running: KubeMode;
  try {
    running = await c.start({
      baseConfig,
      configOut,
      kube: await kubeConnection(text("kubeconfig")),
      ...(publish
        ? {
          publishStatusAddresses: publish.split(",").map((a) => a.trim()).filter((a) => a !== ""),
        }
        : {}),
    }, own);
  } catch (err) {
    console.error(
      err instanceof ConfigError
        ? err.message
        : `scalwsd ${c.mode}: ${(err as Error).message ?? err}`,
    );
    return 1;
  }
  log("info", `${c.mode}_started`, { config: configOut, pid: Deno.pid });
  const { promise, resolve } = Promise.withResolvers<string>();
  Deno.addSignalListener("SIGTERM", () => resolve("SIGTERM"));
  Deno.addSignalListener("SIGINT", () => resolve("SIGINT"));
  Deno.addSignalListener("SIGQUIT", () => resolve("SIGQUIT"));
  Deno.addSignalListener("SIGUSR2", () => {
    log("warn", "signal_ignored", {
      signal: "SIGUSR2",
      reason: `nothing to activate in ${c.mode}`,
    });
  });
  // SIGHUP, as in `scalwsd run`: reopens the access log and reloads (the base configuration is
  // read again). Without a listener it would end the process.
  const hup = () => {
    running.server.reopenLogs();
    running.reload();
  };
  Deno.addSignalListener("SIGHUP", hup);
  // SIGUSR1 is blocked (main.ts, blockUsr1): taken here, it never reaches Deno's inspector.
  const usr1 = new Usr1Watch(() => running.server.reopenLogs());
  const signal = await promise;
  usr1.stop();
  Deno.removeSignalListener("SIGHUP", hup);
  log("info", "draining", { signal, drain_timeout_ms: DRAIN_TIMEOUT });
  // As `scalwsd run`: in-flight requests get the drain timeout, then the process ends anyway.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const drained = await Promise.race([
    running.stop().then(() => true),
    new Promise<false>((r) => timer = setTimeout(() => r(false), DRAIN_TIMEOUT)),
  ]);
  clearTimeout(timer);
  if (!drained) {
    log("error", "drain_timeout", { drain_timeout_ms: DRAIN_TIMEOUT });
    return 3;
  }
  log("info", "stopped", {});
  return 0;
}
