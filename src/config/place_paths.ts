/**
 * Relative paths resolved where they were written: every file or directory named in a
 * configuration file is taken from that file's directory (the main file's for `server` and
 * `upstreams`, a site file's for its tenants), so the same file means the same thing whatever
 * the working directory. A `root` or `cwd` that is not a directory, a `node`/`deno` `entry`
 * missing from its `cwd`, or an `access_log` file whose directory is missing, is an error naming the
 * resolved path. Runs on the draft after provisioning and before validation; it reads the file
 * system (`stat`) but never writes.
 */
import { resolveFile } from "./policies.ts";
import type { Draft, Files, Sink, Stat } from "./provision_draft.ts";
import type { ApplicationConfig, AppRuntime, RuntimeConfig, ServerConfig } from "./types.ts";

/** `access_log` values that are not files. */
const LOG_TARGETS = new Set(["stdout", "stderr", "off"]);

const defaultStat: Stat = (path) => Deno.statSync(path);

/** The directory of a site file (its own name is absolute once the glob expanded it). */
function siteDir(file: string, mainDir: string): string {
  const slash = file.lastIndexOf("/");
  if (slash < 0) return mainDir;
  const dir = slash === 0 ? "/" : file.slice(0, slash);
  return dir.startsWith("/") ? dir : resolveFile(mainDir, dir);
}

function placeServer(s: ServerConfig, dir: string): ServerConfig {
  const at = (p: string) => resolveFile(dir, p);
  const admin = s.admin;
  return {
    ...s,
    listeners: s.listeners.map((l) =>
      l.tls === undefined ? l : {
        ...l,
        tls: {
          ...l.tls,
          certificates: l.tls.certificates.map((c) => ({ ...c, cert: at(c.cert), key: at(c.key) })),
          ...(l.tls.acme !== undefined
            ? {
              acme: {
                ...l.tls.acme,
                ...(l.tls.acme.ca_file !== undefined ? { ca_file: at(l.tls.acme.ca_file) } : {}),
              },
            }
            : {}),
        },
      }
    ),
    admin: {
      ...admin,
      ...(admin.socket !== undefined ? { socket: at(admin.socket) } : {}),
      ...(admin.remote !== undefined
        ? {
          remote: {
            ...admin.remote,
            tls: {
              cert: at(admin.remote.tls.cert),
              key: at(admin.remote.tls.key),
              client_ca: at(admin.remote.tls.client_ca),
            },
          },
        }
        : {}),
    },
    access_log: LOG_TARGETS.has(s.access_log) ? s.access_log : at(s.access_log),
    ...(s.affinity_key_file !== undefined ? { affinity_key_file: at(s.affinity_key_file) } : {}),
    ...(s.state_dir !== undefined ? { state_dir: at(s.state_dir) } : {}),
    ...(s.cache.path !== undefined ? { cache: { ...s.cache, path: at(s.cache.path) } } : {}),
  };
}

interface Where {
  readonly dir: string;
  readonly stat: Stat;
  readonly errors: string[];
}

function isDirectory(stat: Stat, path: string): boolean | "missing" {
  try {
    return stat(path).isDirectory;
  } catch {
    return "missing";
  }
}

function mustBeDirectory(path: string, at: string, w: Where): boolean {
  const found = isDirectory(w.stat, path);
  if (found === true) return true;
  w.errors.push(
    found === "missing"
      ? `${at}: directory "${path}" does not exist`
      : `${at}: "${path}" is not a directory`,
  );
  return false;
}

/**
 * The `entry` of a `node` or `deno` application must be there in its `cwd` (a worker that cannot
 * find it would only crash and restart); a URL or specifier (`npm:`, `https://`) is not checked.
 */
function entryMustExist(rt: AppRuntime, cwd: string, at: string, w: Where): void {
  const entry = rt.preset === "node" ? rt.command[1] : rt.preset === "deno" ? rt.command[3] : "";
  if (entry === undefined || entry === "" || entry.includes(":")) return;
  if (isDirectory(w.stat, resolveFile(cwd, entry)) !== "missing") return;
  w.errors.push(`${at}.entry: file "${entry}" does not exist in "${cwd}"`);
}

/** A runtime with its paths resolved; `root` and `cwd` checked once per object. */
function placeRuntime(
  rt: RuntimeConfig,
  at: string,
  w: Where,
  done: Map<RuntimeConfig, RuntimeConfig>,
): RuntimeConfig {
  const seen = done.get(rt);
  if (seen !== undefined) return seen;
  let out: RuntimeConfig = rt;
  switch (rt.type) {
    case "static":
    case "php": {
      const root = resolveFile(w.dir, rt.root);
      mustBeDirectory(root, `${at}.root`, w);
      out = { ...rt, root };
      break;
    }
    case "proxy":
      if (rt.tls_ca_file !== undefined) {
        out = { ...rt, tls_ca_file: resolveFile(w.dir, rt.tls_ca_file) };
      }
      break;
    case "app":
      if (rt.cwd !== undefined) {
        const cwd = resolveFile(w.dir, rt.cwd);
        if (mustBeDirectory(cwd, `${at}.cwd`, w)) entryMustExist(rt, cwd, at, w);
        out = { ...rt, cwd };
      }
      break;
  }
  done.set(rt, out);
  return out;
}

function placeApplication(app: ApplicationConfig, at: string, w: Where): ApplicationConfig {
  const done = new Map<RuntimeConfig, RuntimeConfig>();
  const runtime = placeRuntime(app.runtime, `${at}.runtime`, w, done);
  return {
    ...app,
    runtime,
    routes: app.routes.map((r, i) => ({
      ...r,
      runtime: placeRuntime(r.runtime, `${at}.routes[${i}].runtime`, w, done),
    })),
  };
}

/**
 * Resolves the draft's relative paths against the directory of the file each was written in
 * (`files.dir` for the main file) and checks that `root` and `cwd` are directories (and that
 * `server.cache.path`, when it exists, is one, and the access log file's directory exists); problems
 * go to `sink.errors` as `PATH: MESSAGE`.
 */
export function placePaths(draft: Draft, files: Files, sink: Sink): void {
  const stat = files.stat ?? defaultStat;
  if (draft.server !== undefined) {
    draft.server = placeServer(draft.server, files.dir);
    // The access log file is created when missing, its directory is not.
    const accessLog = draft.server.access_log;
    if (!LOG_TARGETS.has(accessLog)) {
      const dir = accessLog.slice(0, accessLog.lastIndexOf("/")) || "/";
      if (isDirectory(stat, dir) !== true) {
        sink.errors.push(`server.access_log: directory "${dir}" does not exist`);
      }
    }
    // The disk tier's directory is made when missing, but a file in its place is an error.
    const cache = draft.server.cache.path;
    if (cache !== undefined && isDirectory(stat, cache) === false) {
      sink.errors.push(`server.cache.path: "${cache}" is not a directory`);
    }
  }
  for (const [name, pool] of draft.pools) {
    if (pool.tls?.ca_file !== undefined) {
      draft.pools.set(name, {
        ...pool,
        tls: { ...pool.tls, ca_file: resolveFile(files.dir, pool.tls.ca_file) },
      });
    }
  }
  for (const tenant of draft.tenants) {
    const w: Where = {
      dir: tenant.file === undefined ? files.dir : siteDir(tenant.file, files.dir),
      stat,
      errors: sink.errors,
    };
    tenant.applications.forEach((app, i) => {
      if (app.config === undefined) return;
      tenant.applications[i] = { ...app, config: placeApplication(app.config, app.path, w) };
    });
  }
}
