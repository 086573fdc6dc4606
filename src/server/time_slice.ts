/**
 * A short scheduler slice for the event loop's thread: `sched_setattr` with `sched_runtime` under
 * the normal policy (Linux 6.12's EEVDF custom slices), through libc over FFI. The thread's share
 * of the CPU (its weight, its nice value) stays as it was; what changes is how soon it runs once a
 * socket wakes it. With the default slice (0.7 to 3 ms) a woken scalwsd waited behind PHP-FPM
 * workers that use whole slices (measured in docs/php.md: DokuWiki at 4 connections, the median
 * latency 1.05-1.18x nginx's with the default slice, 0.91-1.01x with 0.1 ms); nginx's worker,
 * using less CPU, is placed ahead by the scheduler without it. Elsewhere (older kernels ignore the
 * field; other systems, no `--allow-ffi`) nothing changes.
 *
 * @module
 */

import { openLibc } from "../base/mod.ts";

/** The slice asked for the event loop's thread: the kernel's least (ns). */
export const EVENT_LOOP_SLICE_NS = 100_000;

const SCHED_OTHER = 0;
/** `struct sched_attr` as of its first version. */
const ATTR_SIZE = 48;
/** `sched_setattr` and `sched_getattr` by architecture. */
const CALLS: Record<string, [number, number]> = { x86_64: [314, 315], aarch64: [274, 275] };

type Libc = { syscall(n: bigint, pid: bigint, attr: Uint8Array, b: bigint, c: bigint): bigint };

let libc: Libc | null | undefined;

function open(): Libc | null {
  if (libc !== undefined) return libc;
  libc = null;
  if (CALLS[Deno.build.arch] === undefined) return null;
  // glibc's syscall(2) passes its arguments on in registers as they are: a fixed prototype with
  // room for both calls' arguments serves (sched_getattr takes four, sched_setattr three).
  libc = openLibc({
    syscall: { parameters: ["i64", "i64", "buffer", "i64", "i64"], result: "i64" },
  }) as unknown as Libc | null;
  return libc;
}

/**
 * At start, on the event loop's thread: the short slice, logged as `event_loop_slice` (info) with
 * the slice before and after in microseconds; nothing where it cannot be set.
 */
export function eventLoopSliceAtStart(
  log: (level: "info", event: string, fields: Record<string, unknown>) => void,
): void {
  const before = threadSlice();
  if (before === null) return;
  const after = setThreadSlice(EVENT_LOOP_SLICE_NS);
  if (after === null) return;
  log("info", "event_loop_slice", { slice_us_before: before / 1000, slice_us: after / 1000 });
}

/** The calling thread's `struct sched_attr`, or null where it cannot be read. */
function readAttr(c: Libc): DataView | null {
  const buf = new Uint8Array(ATTR_SIZE);
  const get = BigInt(CALLS[Deno.build.arch][1]);
  if (Number(c.syscall(get, 0n, buf, BigInt(ATTR_SIZE), 0n)) !== 0) return null;
  return new DataView(buf.buffer);
}

/**
 * The calling thread's slice in ns (0: the kernel's default), or null where it cannot be read.
 */
export function threadSlice(): number | null {
  const c = open();
  if (c === null) return null;
  const v = readAttr(c);
  return v === null ? null : Number(v.getBigUint64(24, true));
}

/**
 * Asks for a slice of `ns` for the calling thread (0: back to the default), keeping its policy
 * and nice value; only under the normal policy (a real-time or batch one set by the operator is
 * left alone). The slice the kernel reports afterwards, or null where nothing could be set.
 */
export function setThreadSlice(ns: number): number | null {
  const c = open();
  if (c === null) return null;
  const v = readAttr(c);
  if (v === null || v.getUint32(4, true) !== SCHED_OTHER) return null;
  v.setUint32(0, ATTR_SIZE, true);
  v.setBigUint64(24, BigInt(ns), true);
  const set = BigInt(CALLS[Deno.build.arch][0]);
  if (Number(c.syscall(set, 0n, new Uint8Array(v.buffer), 0n, 0n)) !== 0) return null;
  return threadSlice();
}
