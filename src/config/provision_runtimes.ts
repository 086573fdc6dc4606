/**
 * Provisioning of a runtime: `runtime: {...}` or the `proxy: {...}` shorthand, and each type
 * with its defaults (proxy with its upstream or backends, respond, static, php, and the
 * supervised applications with their presets).
 */
import { formatPath, parseUnit, type Path } from "./issues.ts";
import type { Draft, Sink } from "./provision_draft.ts";
import { proxyShorthandSchema, type RawProxy, type RawRuntime, runtimeSchema } from "./schema.ts";
import type {
  AppRuntime,
  BackendEntry,
  FastcgiTarget,
  PhpRuntime,
  ProxyRuntime,
  ProxyTarget,
  RuntimeConfig,
} from "./types.ts";

type RawPhp = Extract<RawRuntime, { type: "php" }>;

type RawAppRuntime = Extract<RawRuntime, { type: "app" | "node" | "python" | "deno" }>;

/** `runtime: {...}` or the `proxy: {...}` shorthand, exactly one of them. */
export function chooseRuntime(
  runtimeValue: unknown,
  proxyValue: unknown,
  at: Path,
  draft: Draft,
  sink: Sink,
): RuntimeConfig | undefined {
  const path = formatPath(at);
  if (runtimeValue !== undefined && proxyValue !== undefined) {
    sink.errors.push(`${path}: runtime and proxy are mutually exclusive`);
    return undefined;
  }
  if (proxyValue !== undefined) {
    const raw = parseUnit(proxyShorthandSchema, proxyValue, [...at, "proxy"], sink.errors);
    return raw && provisionProxy(raw, `${path}.proxy`, draft, sink);
  }
  if (runtimeValue === undefined) {
    sink.errors.push(`${path}.runtime: is required`);
    return undefined;
  }
  const runtime = parseUnit(runtimeSchema, runtimeValue, [...at, "runtime"], sink.errors);
  switch (runtime?.type) {
    case undefined:
      return undefined;
    case "proxy":
      return provisionProxy(runtime, `${path}.runtime`, draft, sink);
    case "respond":
      if (runtime.status !== undefined && runtime.status < 200) {
        // A 1xx is an interim answer: the client would wait for a final one that never comes.
        sink.errors.push(
          `${path}.runtime.status: ${runtime.status} is an interim (1xx) status; a respond answer needs 200..599`,
        );
        return undefined;
      }
      return {
        type: "respond",
        status: runtime.status ?? 200,
        body: runtime.body ?? "",
        headers: Object.fromEntries(Object.entries(runtime.headers ?? {})),
      };
    case "static":
      return {
        type: "static",
        root: runtime.root,
        index: runtime.index ?? "index.html",
        follow_symlinks: runtime.follow_symlinks ?? "inside_root",
        allowed_roots: runtime.allowed_roots ?? [],
      };
    case "php":
      return provisionPhp(runtime, `${path}.runtime`, draft);
    case "app":
    case "node":
    case "python":
    case "deno":
      return provisionApp(runtime, `${path}.runtime`, sink);
  }
}

/** Requests that may wait for a FastCGI connection unless `max_queue` says otherwise. */
export const DEFAULT_MAX_QUEUE = 256;

/** Default FastCGI address of `type: php`: Debian's PHP-FPM socket. */
export const DEFAULT_FASTCGI = "unix:/run/php/php-fpm.sock";

/**
 * A PHP runtime: defaults `fastcgi: unix:/run/php/php-fpm.sock`, `index: index.php`,
 * `follow_symlinks: inside_root`, `allowed_roots: []`, `params: {}`, `connect_timeout: 5s`, `response_timeout: 60s`.
 */
function provisionPhp(raw: RawPhp, path: string, draft: Draft): PhpRuntime {
  let fastcgi: FastcgiTarget;
  const f = raw.fastcgi;
  if (f === undefined) {
    fastcgi = {
      kind: "address",
      address: { kind: "unix", path: "/run/php/php-fpm.sock", canonical: DEFAULT_FASTCGI },
      max_conns: 0,
      max_queue: DEFAULT_MAX_QUEUE,
    };
  } else if ("pool" in f && f.pool !== undefined) {
    fastcgi = { kind: "pool", pool: f.pool };
    draft.poolRefs.push({ pool: f.pool, path: `${path}.fastcgi.pool`, protocol: "fastcgi" });
  } else if ("canonical" in f) {
    fastcgi = { kind: "address", address: f, max_conns: 0, max_queue: DEFAULT_MAX_QUEUE };
  } else {
    fastcgi = {
      kind: "address",
      address: f.address!,
      max_conns: f.max_conns ?? 0,
      max_queue: f.max_queue ?? DEFAULT_MAX_QUEUE,
    };
  }
  return {
    type: "php",
    fastcgi,
    root: raw.root,
    index: raw.index ?? "index.php",
    ...(raw.front_controller !== undefined ? { front_controller: raw.front_controller } : {}),
    follow_symlinks: raw.follow_symlinks ?? "inside_root",
    allowed_roots: raw.allowed_roots ?? [],
    params: Object.fromEntries(Object.entries(raw.params ?? {})),
    connect_timeout: raw.connect_timeout ?? 5_000,
    response_timeout: raw.response_timeout ?? 60_000,
    ...(raw.status_path !== undefined ? { status_path: raw.status_path } : {}),
  };
}

/**
 * The system's Python (`/usr/bin/python3`, where Debian's python3-uvicorn and python3-gunicorn
 * live), else `python3` from `PATH`.
 */
function systemPython(): string {
  try {
    Deno.statSync("/usr/bin/python3");
    return "/usr/bin/python3";
  } catch {
    return "python3";
  }
}

/** Deno's own executable: `type: deno` workers run on the same runtime as scalwsd. */
function denoCommand(): string {
  try {
    const exe = Deno.execPath();
    return /deno$/.test(exe) ? exe : "deno";
  } catch {
    return "deno";
  }
}

/**
 * A supervised application; presets fill `command`: `node ENTRY` (default `server.js`) and
 * `deno run --allow-all ENTRY` (default `main.ts`) with `PORT={socket}`, `python3 -m uvicorn --uds {socket} APP` or `python3 -m gunicorn --bind
 * unix:{socket} APP`. Defaults: `workers: 1`, `max_restarts: 5` in `restart_window: 60s`,
 * `drain_timeout: 30s`, `ready_timeout: 30s`, `connect_timeout: 5s`, `response_timeout: 60s`,
 * `retries: 1`, `websocket: true`.
 */
function provisionApp(raw: RawAppRuntime, path: string, sink: Sink): AppRuntime | undefined {
  let command: string[];
  const env: Record<string, string> = {};
  switch (raw.type) {
    case "app":
      command = [...raw.command];
      break;
    case "node":
      command = ["node", raw.entry ?? "server.js"];
      env.PORT = "{socket}";
      break;
    case "deno":
      command = [denoCommand(), "run", "--allow-all", raw.entry ?? "main.ts"];
      env.PORT = "{socket}";
      break;
    case "python":
      command = (raw.server ?? "uvicorn") === "uvicorn"
        ? [systemPython(), "-m", "uvicorn", "--uds", "{socket}", raw.app]
        : [systemPython(), "-m", "gunicorn", "--bind", "unix:{socket}", "--workers", "1", raw.app];
      break;
  }
  Object.assign(env, raw.env ?? {});
  const all = [...command, ...Object.values(env)].join("\n");
  const usesPort = all.includes("{port}");
  if (usesPort && all.includes("{socket}")) {
    sink.errors.push(`${path}: use {socket} or {port}, not both`);
    return undefined;
  }
  if (!usesPort && !all.includes("{socket}")) {
    sink.errors.push(
      `${path}.command: must pass {socket} or {port} to the application (in command or env)`,
    );
    return undefined;
  }
  return {
    type: "app",
    preset: raw.type,
    command,
    workers: raw.workers ?? 1,
    ...(raw.cwd !== undefined ? { cwd: raw.cwd } : {}),
    env,
    listen: usesPort ? "port" : "socket",
    max_restarts: raw.max_restarts ?? 5,
    restart_window: raw.restart_window ?? 60_000,
    drain_timeout: raw.drain_timeout ?? 30_000,
    ready_timeout: raw.ready_timeout ?? 30_000,
    connect_timeout: raw.connect_timeout ?? 5_000,
    response_timeout: raw.response_timeout ?? 60_000,
    retries: raw.retries ?? 1,
    websocket: raw.websocket ?? true,
  };
}

/**
 * A proxy runtime: exactly one of `upstream` (a URL or `{pool}`) and `backends`; defaults
 * `preserve_host: false`, `connect_timeout: 5s`, `response_timeout: 60s`, `websocket: false`.
 * A backend's `weight` defaults to 1.
 */
function provisionProxy(
  raw: RawProxy,
  path: string,
  draft: Draft,
  sink: Sink,
): ProxyRuntime | undefined {
  const before = sink.errors.length;
  let target: ProxyTarget | undefined;
  if (raw.upstream !== undefined && raw.backends !== undefined) {
    sink.errors.push(`${path}: upstream and backends are mutually exclusive`);
  } else if (raw.upstream !== undefined) {
    if ("kind" in raw.upstream) {
      target = raw.upstream;
    } else {
      target = { kind: "pool", pool: raw.upstream.pool };
      draft.poolRefs.push({
        pool: raw.upstream.pool,
        path: `${path}.upstream.pool`,
        protocol: "http",
      });
    }
  } else if (raw.backends !== undefined) {
    target = provisionBackends(raw.backends, `${path}.backends`, draft, sink);
  } else {
    sink.errors.push(`${path}: upstream or backends is required`);
  }

  let tlsCaFile: string | undefined;
  if (raw.tls_ca_file !== undefined && target !== undefined) {
    if (target.kind === "address" && target.scheme === "https") tlsCaFile = raw.tls_ca_file;
    else if (target.kind === "address") {
      sink.errors.push(`${path}.tls_ca_file: only allowed with an https:// upstream`);
    } else {
      sink.errors.push(
        `${path}.tls_ca_file: not allowed on pool routes; set tls.ca_file on the pool`,
      );
    }
  }
  let client: ProxyRuntime["client"];
  if (raw.client !== undefined && target !== undefined) {
    if (target.kind === "address") client = { ...raw.client };
    else {
      sink.warnings.push(
        `${path}.client: ignored on pool routes; pools use server.upstream_client`,
      );
    }
  }
  if (target === undefined || sink.errors.length !== before) return undefined;
  return {
    type: "proxy",
    target,
    preserve_host: raw.preserve_host ?? false,
    connect_timeout: raw.connect_timeout ?? 5_000,
    response_timeout: raw.response_timeout ?? 60_000,
    websocket: raw.websocket ?? false,
    ...(tlsCaFile !== undefined ? { tls_ca_file: tlsCaFile } : {}),
    ...(client !== undefined ? { client } : {}),
  };
}

/** 1..64 entries, each a `pool` or a `status`, at least one weight above 0, no repeats. */
function provisionBackends(
  raw: NonNullable<RawProxy["backends"]>,
  path: string,
  draft: Draft,
  sink: Sink,
): ProxyTarget {
  const backends: BackendEntry[] = [];
  const seen = new Set<string | number>();
  let positive = false;
  for (let i = 0; i < raw.length; i++) {
    const entry = raw[i];
    const at = `${path}[${i}]`;
    const weight = entry.weight ?? 1;
    if (weight > 0) positive = true;
    if ((entry.pool === undefined) === (entry.status === undefined)) {
      sink.errors.push(`${at}: exactly one of pool and status is required`);
    } else if (entry.pool !== undefined) {
      if (seen.has(entry.pool)) sink.errors.push(`${at}.pool: duplicate pool "${entry.pool}"`);
      seen.add(entry.pool);
      draft.poolRefs.push({ pool: entry.pool, path: `${at}.pool`, protocol: "http" });
      backends.push({ pool: entry.pool, weight });
    } else if (entry.status !== undefined) {
      if (seen.has(entry.status)) {
        sink.errors.push(`${at}.status: duplicate status ${entry.status}`);
      }
      seen.add(entry.status);
      backends.push({ status: entry.status, weight });
    }
  }
  if (!positive) sink.errors.push(`${path}: at least one backend needs a weight above 0`);
  return { kind: "backends", backends };
}
