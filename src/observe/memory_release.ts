/**
 * Giving freed memory back to the operating system. Measured on Deno 2.9.6 (Linux): after a
 * burst of load, V8 keeps the pages of its shrunken heap (heapTotal fell from 100 to 11 MiB
 * while RSS stayed at 224 MiB), and glibc keeps the native buffers of closed connections in
 * its arenas. Two calls return both:
 *
 * - a last-resort full GC (V8's `gc` extension, `flavor: "last-resort"`), which also releases
 *   the pooled pages; an ordinary full GC does not;
 * - `malloc_trim(0)` from libc through FFI (needs `--allow-ffi`; glibc only).
 *
 * Each part is optional: without it the other still runs, and `describe()` says what is there.
 */

import { openLibc } from "../base/mod.ts";
import v8 from "node:v8";
import vm from "node:vm";

type GcFunction = (options: { type: string; execution: string; flavor: string }) => void;

const GC_OPTIONS = { type: "major", execution: "sync", flavor: "last-resort" };

/** Releases memory; each part is null when this process cannot do it. */
export interface MemoryReleaser {
  /** What is available, for the start-up log: `gc`, `malloc_trim`. */
  describe(): string[];
  /** Runs every available part; synchronous (a pause of tens of ms on a 100 MiB heap). */
  release(): void;
}

/** V8's `gc` function, exposed in a fresh context after setting `--expose-gc`; null if refused. */
function exposeGc(): GcFunction | null {
  const existing = (globalThis as { gc?: unknown }).gc;
  if (typeof existing === "function") return existing as GcFunction;
  try {
    v8.setFlagsFromString("--expose-gc");
    const fn = vm.runInNewContext("gc");
    return typeof fn === "function" ? fn as GcFunction : null;
  } catch {
    return null;
  }
}

/** glibc's `malloc_trim`, or null without the FFI permission or on another C library. */
function openMallocTrim(): (() => void) | null {
  const lib = openLibc({ malloc_trim: { parameters: ["usize"], result: "i32" } });
  if (lib === null) return null;
  const trim = lib.malloc_trim;
  return () => {
    trim(0n);
  };
}

class ProcessReleaser implements MemoryReleaser {
  constructor(
    private readonly gc: GcFunction | null,
    private readonly trim: (() => void) | null,
  ) {}

  describe(): string[] {
    const parts: string[] = [];
    if (this.gc !== null) parts.push("gc");
    if (this.trim !== null) parts.push("malloc_trim");
    return parts;
  }

  release(): void {
    // The GC first: it frees the backing stores and native objects that malloc_trim returns.
    if (this.gc !== null) this.gc(GC_OPTIONS);
    if (this.trim !== null) this.trim();
  }
}

/** The releaser of this process (opens what it can, once). */
export function processReleaser(): MemoryReleaser {
  return new ProcessReleaser(exposeGc(), openMallocTrim());
}
