/**
 * The process's open-file limit (RLIMIT_NOFILE) through libc over FFI: raised at start from the
 * soft limit to the hard one (as nginx's `worker_rlimit_nofile` would be set by hand), and
 * compared with what `server.limits.max_connections` needs. Linux only (glibc's `libc.so.6`);
 * elsewhere, or without `--allow-ffi`, nothing is read or changed.
 *
 * @module
 */

import { openLibc } from "../base/mod.ts";

import type { Config } from "../config/mod.ts";
import { hostSupport } from "./tls_direct.ts";

/** `RLIMIT_NOFILE` on Linux (x86_64 and arm64 alike). */
const RLIMIT_NOFILE = 7;

/** A soft and a hard limit; `Infinity` for RLIM_INFINITY. */
export interface OpenFileLimit {
  readonly soft: number;
  readonly hard: number;
}

type Libc = {
  getrlimit(resource: number, out: Uint8Array): number;
  setrlimit(resource: number, value: Uint8Array): number;
};

let libc: Libc | null | undefined;

function open(): Libc | null {
  if (libc !== undefined) return libc;
  libc = null;
  libc = openLibc({
    getrlimit: { parameters: ["i32", "buffer"], result: "i32" },
    setrlimit: { parameters: ["i32", "buffer"], result: "i32" },
  }) as unknown as Libc | null;
  return libc;
}

const INFINITY = 0xffff_ffff_ffff_ffffn;

function fromRlim(v: bigint): number {
  return v === INFINITY ? Infinity : Number(v);
}

/** The open-file limits now, or null where they cannot be read. */
export function openFileLimit(): OpenFileLimit | null {
  const c = open();
  if (c === null) return null;
  const buf = new Uint8Array(16);
  if (c.getrlimit(RLIMIT_NOFILE, buf) !== 0) return null;
  const v = new DataView(buf.buffer);
  return {
    soft: fromRlim(v.getBigUint64(0, true)),
    hard: fromRlim(v.getBigUint64(8, true)),
  };
}

/**
 * Raises the soft open-file limit to the hard one; the limits before and after, or null where
 * they cannot be read. A hard limit of RLIM_INFINITY is taken as 1,048,576 (Linux's nr_open
 * default: the soft limit may not be infinite).
 */
export function raiseOpenFileLimit(): { before: OpenFileLimit; after: OpenFileLimit } | null {
  const before = openFileLimit();
  if (before === null) return null;
  const target = before.hard === Infinity ? 1_048_576 : before.hard;
  if (before.soft < target) {
    const buf = new Uint8Array(16);
    const v = new DataView(buf.buffer);
    v.setBigUint64(0, BigInt(target), true);
    v.setBigUint64(8, before.hard === Infinity ? INFINITY : BigInt(before.hard), true);
    open()!.setrlimit(RLIMIT_NOFILE, buf);
  }
  return { before, after: openFileLimit() ?? before };
}

/** Descriptors kept for the process itself: listeners, logs, admin, DNS, child pipes. */
export const RESERVED_FILES = 256;

/**
 * Descriptors one client connection may hold at most: its own, and one member connection while
 * it is proxied; two more for a TLS listener that relays (tls_relay.ts: the loopback pair).
 */
export function filesPerConnection(relayedTls: boolean): number {
  return relayedTls ? 4 : 2;
}

/**
 * A warning when `server.limits.max_connections` cannot be met with `soft` open files, else
 * null. `relayedTls`: some TLS listener relays (3 descriptors per connection instead of 1).
 * Unlimited (`max_connections: 0`) is not checked.
 */
export function openFilesWarning(config: Config, soft: number, relayedTls: boolean): string | null {
  const max = config.server.limits.max_connections;
  if (max <= 0 || soft === Infinity) return null;
  const per = filesPerConnection(relayedTls);
  const need = max * per + RESERVED_FILES;
  if (need <= soft) return null;
  return `server.limits.max_connections: ${max} connections need up to ${need} open files ` +
    `(${per} each${relayedTls ? ", TLS listeners relaying" : ""}, plus ${RESERVED_FILES}), ` +
    `but the open-file limit is ${soft}: about ${
      Math.max(0, Math.floor((soft - RESERVED_FILES) / per))
    } can be served (raise the hard limit: ulimit -Hn, LimitNOFILE=)`;
}

/**
 * Whether some TLS listener of `config` relays (tls_direct.ts): one with several certificates
 * (or an ACME certificate beside others), or any where the direct way is not available here.
 */
export function relaysTls(config: Config): boolean {
  const host = hostSupport();
  const direct = host.migrateReq && host.reusePort;
  return config.server.listeners.some((l) =>
    l.tls !== undefined &&
    (!direct || l.tls.certificates.length + (l.tls.acme !== undefined ? 1 : 0) !== 1)
  );
}

/**
 * At start: raises the soft open-file limit to the hard one and reports both (`open_files`,
 * info), and what `server.limits.max_connections` cannot get (`open_files_short`, warn).
 */
export function openFilesAtStart(
  config: Config,
  log: (level: "info" | "warn", event: string, fields: Record<string, unknown>) => void,
): void {
  const r = raiseOpenFileLimit();
  if (r === null) return;
  const n = (v: number) => v === Infinity ? "unlimited" : v;
  log("info", "open_files", {
    soft_before: n(r.before.soft),
    soft: n(r.after.soft),
    hard: n(r.after.hard),
  });
  const warning = openFilesWarning(config, r.after.soft, relaysTls(config));
  if (warning !== null) log("warn", "open_files_short", { message: warning });
}

/** `scalwsd check`'s warning: with the soft limit raised to the hard one, as at start. */
export function openFilesCheck(config: Config): string | null {
  const now = openFileLimit();
  if (now === null) return null;
  const soft = now.hard === Infinity ? 1_048_576 : now.hard;
  return openFilesWarning(config, soft, relaysTls(config));
}
