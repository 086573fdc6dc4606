/**
 * A counter shared by every process of the host on one disk tier (`PATH/v1/epoch`, a 4 KiB
 * file mapped into each process's memory over FFI): every write, replacement or removal of an
 * entry file adds one, after the rename or removal. A process that checked a file (or a memory
 * copy of an entry against its file) at one value need not check it again while the value is
 * the same: a hit then costs no system call at all. Linux with `--allow-ffi` only; elsewhere
 * there is none (`open` gives null) and every use is checked. Not a lock and not a clock:
 * readers only compare it for equality.
 *
 * The file is never truncated (a mapped page past a file's end would fault): it is made 4 KiB
 * once and only the first 4 bytes are used. `close` unmaps it (a tier given up on a reload);
 * a write that ends after that still bumps it, through a mapping of its own.
 *
 * @module
 */

import { MAP_SYMBOLS, type MapCalls, openLibc } from "../base/mod.ts";

const EPOCH_BYTES = 4096;
const O_RDWR = 2;
const O_CREAT = 0o100;
const O_CLOEXEC = 0o2000000;
const PROT_READ = 1;
const PROT_WRITE = 2;
const MAP_SHARED = 1;

type Libc = MapCalls & {
  open(path: Uint8Array, flags: number, mode: number): number;
  ftruncate(fd: number, length: number | bigint): number;
  close(fd: number): number;
};

let libc: Libc | null | undefined;

function calls(): Libc | null {
  if (libc !== undefined) return libc;
  libc = null;
  libc = openLibc({
    ...MAP_SYMBOLS,
    open: { parameters: ["buffer", "i32", "u32"], result: "i32" },
    ftruncate: { parameters: ["i32", "i64"], result: "i32" },
    close: { parameters: ["i32"], result: "i32" },
  }) as unknown as Libc | null;
  return libc;
}

/** The shared counter of one disk tier (see the module comment). */
export class SharedEpoch {
  /** The mapped counter; null once closed. */
  private cell: Int32Array | null;

  private constructor(
    private readonly dir: string,
    private readonly pointer: Deno.PointerObject,
  ) {
    this.cell = new Int32Array(Deno.UnsafePointerView.getArrayBuffer(pointer, 4));
  }

  /** The counter of the directory `dir` (created when missing); null where it cannot be had. */
  static open(dir: string): SharedEpoch | null {
    const c = calls();
    if (c === null) return null;
    const fd = c.open(
      new TextEncoder().encode(`${dir}/epoch\0`),
      O_RDWR | O_CREAT | O_CLOEXEC,
      0o600,
    );
    if (fd < 0) return null;
    try {
      // Growing to 4 KiB (a no-op once it is): never shorter, so the mapping never faults.
      if (c.ftruncate(fd, EPOCH_BYTES) !== 0) return null;
      const p = c.mmap(null, EPOCH_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      // MAP_FAILED is (void *) -1.
      if (p === null || Deno.UnsafePointer.value(p) === 0xffffffffffffffffn) return null;
      return new SharedEpoch(dir, p);
    } finally {
      c.close(fd);
    }
  }

  /** The counter now; NaN once closed (every use is then checked). */
  get value(): number {
    return this.cell === null ? NaN : Atomics.load(this.cell, 0);
  }

  /** Adds one (after a file was written, replaced or removed), closed or not. */
  bump(): void {
    if (this.cell !== null) {
      Atomics.add(this.cell, 0, 1);
      return;
    }
    // A write or removal that ended after `close`: the other processes must still learn of it.
    const once = SharedEpoch.open(this.dir);
    once?.bump();
    once?.close();
  }

  /** Unmaps the counter (idempotent). */
  close(): void {
    if (this.cell === null) return;
    this.cell = null;
    calls()?.munmap(this.pointer, EPOCH_BYTES);
  }
}
