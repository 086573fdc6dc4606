/**
 * The controller's own configuration: a small YAML file, separate from the scalwsd
 * configuration it manages. YAML -> zod (strict, every error with its path) -> defaults ->
 * cross-field rules -> a frozen `ControllerConfig`. Relative paths are resolved against the
 * directory of the controller's file.
 */
import { dirname, isAbsolute, resolve } from "node:path";
import YAML from "yaml";
import { z } from "zod";
import {
  ConfigError,
  deepFreeze,
  formatDuration,
  leaf,
  parseDuration,
  parseListenAddress,
  parseSize,
  parseUnit,
  ValueError,
} from "../config/mod.ts";

/** The provisioned controller configuration; durations in milliseconds. */
export interface ControllerConfig {
  /** The controller file the settings came from (for messages). */
  readonly file: string;
  /** Instance records, generations, sockets and instance logs; default `/run/scalws-controller`. */
  readonly state_dir: string;
  /** The scalwsd configuration that a reload copies into a new generation. Required. */
  readonly config: string;
  /** Unix socket of the control API (mode 0600); default `<state_dir>/control.sock`. */
  readonly socket: string;
  /** Instance count bounds; defaults min 1, max 4, initial = min. */
  readonly instances: { readonly min: number; readonly max: number; readonly initial: number };
  /**
   * CPUs instances are pinned to, handed out in turn; default every CPU of the host but the
   * `reserved_cpus`.
   */
  readonly cpus: readonly number[];
  /** Host limit: CPUs kept for the system, the controller and applications, never pinned to. */
  readonly reserved_cpus: readonly number[];
  /**
   * Host limit: instances this host may run at most (caps `instances.max`, which defaults to
   * it); absent: no cap. (`min_instances` is read as `instances.min`.)
   */
  readonly max_instances?: number;
  /**
   * Host limit: bytes of RAM that must stay available (MemAvailable): no instance is started
   * for a scale-out or a rolling reload below it; 0 (default) checks nothing.
   */
  readonly min_free_ram: number;
  /** CPUs given to each instance; default 1. */
  readonly cpus_per_instance: number;
  /** Metrics listener of instance `web-i`: this host, port `metrics_base + i`. Default 127.0.0.1:19100. */
  readonly metrics_base: { readonly hostname: string; readonly port: number };
  /** Time an instance has to finish in-flight requests after SIGTERM; default 30 s. */
  readonly drain_timeout: number;
  /** Extra time before the controller kills a draining instance; default 5 s. */
  readonly kill_grace: number;
  /** Time from spawn to Ready; default 30 s. */
  readonly start_timeout: number;
  /** Restarts allowed within `restart_window` before a slot stays Failed; default 5. */
  readonly max_restarts: number;
  /** Default 5 min. */
  readonly restart_window: number;
  /** How often instances are probed; default 1 s. */
  readonly probe_interval: number;
  /**
   * An active instance whose probes go unanswered this long fails liveness: it is killed and
   * restarted with backoff; default 10 s.
   */
  readonly liveness_timeout: number;
  /** `on` (default) or `off`: off freezes the instance count. */
  readonly autoscaling: boolean;
  /** PressureScore above which the tier scales out; default 0.75. */
  readonly scale_out_above: number;
  /** PressureScore below which the tier scales in; default 0.30. */
  readonly scale_in_below: number;
  /** Time above `scale_out_above` before scaling out; default 3 s (3 to 5 s recommended). */
  readonly scale_out_after: number;
  /** Time below `scale_in_below` before scaling in; default 60 s. */
  readonly scale_in_after: number;
  /** No autoscaling action within this time after any action; default 30 s. */
  readonly cooldown: number;
  /** Event-loop lag p99 counted as saturated; default 5 ms. */
  readonly lag_saturated: number;
  /** In-flight requests one event loop is expected to carry; default 256. */
  readonly inflight_per_loop: number;
  /** Request latency p99 target; absent (default) leaves latency out of the score. */
  readonly p99_target?: number;
  /** How often the autoscaler evaluates; default 1 s. */
  readonly evaluation_interval: number;
  /**
   * `enable` (default): the controller sets `net.ipv4.tcp_migrate_req` to 1 in its network
   * namespace when it may (root or `CAP_NET_ADMIN`); `leave`: it only reports the value.
   */
  readonly tcp_migrate_req: "enable" | "leave";
}

/** ADR-0035's state directory (`/run/scalws-controller/instances/<id>.json`). */
export const DEFAULT_STATE_DIR = "/run/scalws-controller";

/** Longest Unix socket path Linux accepts (sun_path is 108 bytes with the NUL). */
export const MAX_SOCKET_PATH = 107;

const text = () =>
  leaf((v) => {
    if (typeof v !== "string") throw new ValueError("must be a string");
    if (v === "") throw new ValueError("must not be empty");
    return v;
  });

const int = (min: number, max: number) =>
  leaf((v) => {
    if (typeof v !== "number" || !Number.isInteger(v)) throw new ValueError("must be an integer");
    if (v < min || v > max) throw new ValueError(`must be between ${min} and ${max}`);
    return v;
  });

const ratio = () =>
  leaf((v) => {
    if (typeof v !== "number" || !Number.isFinite(v)) throw new ValueError("must be a number");
    if (v <= 0 || v > 2) throw new ValueError("must be greater than 0 and at most 2");
    return v;
  });

const duration = (min: number) =>
  leaf((v) => {
    if (typeof v !== "string" && typeof v !== "number") {
      throw new ValueError('must be a duration such as "10s"');
    }
    const ms = parseDuration(v);
    if (ms < min) throw new ValueError(`must be at least ${formatDuration(min)}`);
    return ms;
  });

/** `on`/`off`, `true`/`false` (YAML 1.2 reads `on` as a string). */
const onOff = () =>
  leaf((v) => {
    if (v === true || v === "on") return true;
    if (v === false || v === "off") return false;
    throw new ValueError("must be on or off");
  });

/** Parses `0-3,6` or a list of integers into sorted, distinct CPU numbers. */
export function parseCpuList(value: unknown): number[] {
  const out = new Set<number>();
  const add = (n: number) => {
    if (!Number.isInteger(n) || n < 0 || n > 4095) {
      throw new ValueError(`invalid CPU ${n}: must be an integer between 0 and 4095`);
    }
    out.add(n);
  };
  if (Array.isArray(value)) {
    for (const v of value) {
      if (typeof v !== "number") {
        throw new ValueError('must be a list of CPU numbers or a range such as "0-3"');
      }
      add(v);
    }
  } else if (typeof value === "number") {
    add(value);
  } else if (typeof value === "string") {
    for (const part of value.split(",")) {
      const m = /^\s*(\d+)(?:-(\d+))?\s*$/.exec(part);
      if (m === null) throw new ValueError(`invalid CPU list "${value}"`);
      const a = Number(m[1]);
      const b = m[2] === undefined ? a : Number(m[2]);
      if (b < a) throw new ValueError(`invalid CPU range "${part.trim()}": must go upwards`);
      if (b - a > 4095) throw new ValueError(`invalid CPU range "${part.trim()}"`);
      for (let c = a; c <= b; c++) add(c);
    }
  } else {
    throw new ValueError('must be a list of CPU numbers or a range such as "0-3"');
  }
  if (out.size === 0) throw new ValueError("must name at least one CPU");
  return [...out].sort((x, y) => x - y);
}

/** The controller file (`scalwsd controller --config`). */
export const controllerSchema = z.object({
  state_dir: text().optional(),
  config: text(),
  socket: text().optional(),
  instances: z.object({
    min: int(1, 64).optional(),
    max: int(1, 64).optional(),
    initial: int(1, 64).optional(),
  }).strict().optional(),
  cpus: leaf(parseCpuList).optional(),
  reserved_cpus: leaf((v) => Array.isArray(v) && v.length === 0 ? [] : parseCpuList(v)).optional(),
  max_instances: int(1, 64).optional(),
  min_instances: int(1, 64).optional(),
  min_free_ram: leaf((v) => {
    if (typeof v !== "string" && typeof v !== "number") {
      throw new ValueError('must be a size such as "512MiB"');
    }
    return parseSize(v);
  }).optional(),
  cpus_per_instance: int(1, 4096).optional(),
  metrics_base: leaf((v) => {
    if (typeof v !== "string") throw new ValueError("must be a string");
    return parseListenAddress(v);
  }).optional(),
  drain_timeout: duration(1).optional(),
  kill_grace: duration(0).optional(),
  start_timeout: duration(1).optional(),
  max_restarts: int(0, 1000).optional(),
  restart_window: duration(1).optional(),
  probe_interval: duration(10).optional(),
  liveness_timeout: duration(100).optional(),
  autoscaling: onOff().optional(),
  scale_out_above: ratio().optional(),
  scale_in_below: ratio().optional(),
  scale_out_after: duration(0).optional(),
  scale_in_after: duration(0).optional(),
  cooldown: duration(0).optional(),
  lag_saturated: duration(1).optional(),
  inflight_per_loop: int(1, 1_000_000).optional(),
  p99_target: duration(1).optional(),
  evaluation_interval: duration(10).optional(),
  tcp_migrate_req: leaf((v) => {
    if (v === "enable" || v === "leave") return v;
    throw new ValueError("must be enable or leave");
  }).optional(),
}).strict();

/** Every CPU of this host: `0 .. hardwareConcurrency - 1`. */
export function hostCpus(): number[] {
  return Array.from({ length: Math.max(1, navigator.hardwareConcurrency) }, (_, i) => i);
}

/**
 * Checks controller configuration text; `file` names it in messages and anchors relative
 * paths. Throws `ConfigError` with every problem found.
 */
export function parseControllerConfig(
  textIn: string,
  file: string,
  cpusOfHost: () => number[] = hostCpus,
): ControllerConfig {
  const doc = YAML.parseDocument(textIn, { uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(file, doc.errors.map((e) => e.message.split("\n")[0]));
  }
  const errors: string[] = [];
  const data = doc.toJS({ maxAliasCount: 100 }) ?? {};
  const raw = parseUnit(controllerSchema, data, [], errors);
  if (raw === undefined) throw new ConfigError(file, errors);
  const base = dirname(resolve(file));
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  const stateDir = abs(raw.state_dir ?? DEFAULT_STATE_DIR);
  if (
    raw.min_instances !== undefined && raw.instances?.min !== undefined &&
    raw.min_instances !== raw.instances.min
  ) {
    errors.push(`min_instances: differs from instances.min (${raw.instances.min}); set one`);
  }
  const min = raw.instances?.min ?? raw.min_instances ?? 1;
  const cap = raw.max_instances;
  const max = raw.instances?.max ?? cap ?? Math.max(4, min);
  const initial = raw.instances?.initial ?? min;
  if (cap !== undefined && min > cap) {
    errors.push(`instances.min: must be at most max_instances (${cap})`);
  } else {
    if (cap !== undefined && max > cap) {
      errors.push(`instances.max: must be at most max_instances (${cap})`);
    }
    if (max < min) errors.push(`instances.max: must be at least instances.min (${min})`);
    if (initial < min || initial > max) {
      errors.push(
        `instances.initial: must be between instances.min (${min}) and instances.max (${max})`,
      );
    }
  }
  const reserved = raw.reserved_cpus ?? [];
  const taken = (raw.cpus ?? []).filter((c) => reserved.includes(c));
  if (taken.length > 0) {
    errors.push(`cpus: ${taken.join(", ")} also in reserved_cpus: instances never use those`);
  }
  const cpus = (raw.cpus ?? cpusOfHost()).filter((c) => !reserved.includes(c));
  if (cpus.length === 0) errors.push("reserved_cpus: leaves no CPU for instances");
  const perInstance = raw.cpus_per_instance ?? 1;
  if (cpus.length > 0 && perInstance > cpus.length) {
    errors.push(`cpus_per_instance: must be at most the number of cpus (${cpus.length})`);
  }
  const out = raw.scale_out_above ?? 0.75;
  const inBelow = raw.scale_in_below ?? 0.30;
  if (inBelow >= out) {
    errors.push(`scale_in_below: must be lower than scale_out_above (${out})`);
  }
  const metrics = raw.metrics_base ?? { hostname: "127.0.0.1", port: 19100 };
  // A rolling reload can need up to twice `max` ids at once (new ones beside draining ones).
  if (metrics.port === 0 || metrics.port + 2 * max > 65535) {
    errors.push(`metrics_base: port must leave room for ${2 * max + 1} instances below 65536`);
  }
  const socket = abs(raw.socket ?? `${stateDir}/control.sock`);
  if (new TextEncoder().encode(socket).length > MAX_SOCKET_PATH) {
    errors.push(`socket: path "${socket}" is longer than ${MAX_SOCKET_PATH} bytes`);
  }
  // Instances' admin sockets live in <state_dir>/sockets/web-NN.sock.
  if (
    new TextEncoder().encode(`${stateDir}/sockets/web-${2 * max}.sock`).length > MAX_SOCKET_PATH
  ) {
    errors.push(`state_dir: path "${stateDir}" is too long for the instances' admin sockets`);
  }
  if (errors.length > 0) throw new ConfigError(file, errors);
  return deepFreeze({
    file,
    state_dir: stateDir,
    config: abs(raw.config),
    socket,
    instances: { min, max, initial },
    cpus,
    reserved_cpus: reserved,
    ...(cap === undefined ? {} : { max_instances: cap }),
    min_free_ram: raw.min_free_ram ?? 0,
    cpus_per_instance: perInstance,
    metrics_base: metrics,
    drain_timeout: raw.drain_timeout ?? 30_000,
    kill_grace: raw.kill_grace ?? 5_000,
    start_timeout: raw.start_timeout ?? 30_000,
    max_restarts: raw.max_restarts ?? 5,
    restart_window: raw.restart_window ?? 300_000,
    probe_interval: raw.probe_interval ?? 1_000,
    liveness_timeout: raw.liveness_timeout ?? 10_000,
    autoscaling: raw.autoscaling ?? true,
    scale_out_above: out,
    scale_in_below: inBelow,
    scale_out_after: raw.scale_out_after ?? 3_000,
    scale_in_after: raw.scale_in_after ?? 60_000,
    cooldown: raw.cooldown ?? 30_000,
    lag_saturated: raw.lag_saturated ?? 5,
    inflight_per_loop: raw.inflight_per_loop ?? 256,
    ...(raw.p99_target === undefined ? {} : { p99_target: raw.p99_target }),
    evaluation_interval: raw.evaluation_interval ?? 1_000,
    tcp_migrate_req: raw.tcp_migrate_req ?? "enable",
  });
}

/** Reads and checks a controller file; an unreadable file is a `ConfigError` too. */
export async function loadControllerConfig(file: string): Promise<ControllerConfig> {
  let t: string;
  try {
    t = await Deno.readTextFile(file);
  } catch (e) {
    throw new ConfigError(file, [`cannot read file: ${e instanceof Error ? e.message : e}`]);
  }
  return parseControllerConfig(t, file);
}
