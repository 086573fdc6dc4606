/**
 * The flags of `scalwsd run` beyond `--config`: the ones the controller passes to each instance
 * (`--instance-id`, `--generation`, `--cpus`, `--admin-socket`, `--metrics-address`) and the
 * drain deadline.
 */
import { type HostPort, parseDuration, parseListenAddress, ValueError } from "../src/config/mod.ts";
import { parseCpuList } from "../src/controller/mod.ts";

/** `parseArgs` options for the flags below (all strings). */
export const RUN_FLAGS = {
  "instance-id": { type: "string" },
  generation: { type: "string" },
  cpus: { type: "string" },
  "admin-socket": { type: "string" },
  "metrics-address": { type: "string" },
  "drain-timeout": { type: "string" },
  "controller-socket": { type: "string" },
  "base-dir": { type: "string" },
} as const;

/** How `scalwsd run` behaves; everything but `drainTimeout` is set only under the controller. */
export interface RunOptions {
  /** Set under the controller: listeners are bound only on SIGUSR2, SIGHUP is ignored. */
  readonly instanceId?: string;
  /**
   * `--generation`: the controller's configuration generation the instance runs; it becomes the
   * id of the process's first generation, which `/readyz` reports (default 1).
   */
  readonly configGeneration?: number;
  /** The CPU set the controller pinned the instance to (logged). */
  readonly cpus?: readonly number[];
  /** Replaces `server.admin.socket`. */
  readonly adminSocket?: string;
  /** Replaces `server.metrics.address`. */
  readonly metricsAddress?: HostPort;
  /** The controller's control socket: member lists of api pools are set there, not here. */
  readonly controllerSocket?: string;
  /**
   * `--drain-timeout`: in-flight requests get this long after SIGTERM; absent: the
   * configuration's `server.drain_timeout` (default 30 s).
   */
  readonly drainTimeout?: number;
  /**
   * `--base-dir`: where the relative paths of the configuration file resolve, when the file is
   * a copy away from the operator's (the controller's generations); default the file's own.
   */
  readonly baseDir?: string;
}

/** Turns the flag values into options, or returns the message of the first bad flag. */
export function runOptions(
  values: Partial<Record<keyof typeof RUN_FLAGS, string>>,
): RunOptions | string {
  try {
    const id = values["instance-id"];
    if (id !== undefined && !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(id)) {
      return `--instance-id: invalid id "${id}"`;
    }
    let generation: number | undefined;
    if (values.generation !== undefined) {
      generation = Number(values.generation);
      if (!/^[1-9]\d{0,8}$/.test(values.generation)) {
        return `--generation: must be a positive integer, not "${values.generation}"`;
      }
    }
    const flag = (name: string, parse: () => unknown) => {
      try {
        return parse();
      } catch (e) {
        if (e instanceof ValueError) throw new ValueError(`--${name}: ${e.message}`);
        throw e;
      }
    };
    const cpus = values.cpus === undefined
      ? undefined
      : flag("cpus", () => parseCpuList(values.cpus)) as number[];
    const metrics = values["metrics-address"] === undefined
      ? undefined
      : flag("metrics-address", () => parseListenAddress(values["metrics-address"]!)) as HostPort;
    const drain = values["drain-timeout"] === undefined
      ? undefined
      : flag("drain-timeout", () => parseDuration(values["drain-timeout"]!)) as number;
    if (drain !== undefined && drain < 1) return "--drain-timeout: must be greater than 0";
    const sock = values["admin-socket"];
    if (sock !== undefined && sock === "") return "--admin-socket: must not be empty";
    return {
      ...(id === undefined ? {} : { instanceId: id }),
      ...(generation === undefined ? {} : { configGeneration: generation }),
      ...(cpus === undefined ? {} : { cpus }),
      ...(sock === undefined ? {} : { adminSocket: sock }),
      ...(metrics === undefined ? {} : { metricsAddress: metrics }),
      ...(values["controller-socket"] ? { controllerSocket: values["controller-socket"] } : {}),
      ...(values["base-dir"] ? { baseDir: values["base-dir"] } : {}),
      ...(drain === undefined ? {} : { drainTimeout: drain }),
    };
  } catch (e) {
    if (e instanceof ValueError) return e.message;
    throw e;
  }
}
