/**
 * The one way scalwsd reaches glibc's calls that Deno does not expose (socket options, resource
 * limits, positioned reads, a shared mapping, `malloc_trim`): `openLibc(symbols)` gives those
 * symbols from `libc.so.6`, or null where they cannot be had (not Linux, no `--allow-ffi`, another
 * C library). Every caller has a way to do without. SIGUSR1's guard (`usr1.ts`) opens libc itself:
 * it runs before anything else is loaded and also tries musl's names.
 *
 * @module
 */

/** `symbols` from glibc, or null where they cannot be had. */
export function openLibc<const S extends Deno.ForeignLibraryInterface>(
  symbols: S,
): Deno.DynamicLibrary<S>["symbols"] | null {
  try {
    if (Deno.build.os !== "linux") return null;
    if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return null;
    return Deno.dlopen("libc.so.6", symbols).symbols;
  } catch {
    return null;
  }
}

/** `mmap` and `munmap`, for the callers that map files (the cache's entry files and epoch). */
export const MAP_SYMBOLS = {
  mmap: { parameters: ["pointer", "usize", "i32", "i32", "i32", "i64"], result: "pointer" },
  munmap: { parameters: ["pointer", "usize"], result: "i32" },
} as const;

/** The calls {@linkcode MAP_SYMBOLS} gives. */
export interface MapCalls {
  mmap(
    addr: Deno.PointerValue,
    length: number | bigint,
    prot: number,
    flags: number,
    fd: number,
    offset: number | bigint,
  ): Deno.PointerValue;
  munmap(addr: Deno.PointerValue, length: number | bigint): number;
}
