/**
 * The disk tier's open files, for the hit path: a bounded set of entry files kept open (least
 * recently used closed first, and any unused for `IDLE_MS`), each checked on every use to still
 * be the file its path names (its link count: a file replaced by a rename, or removed, has
 * none left, so a replaced entry is never served from the old one), and read with positioned
 * reads. On Linux with `--allow-ffi` the calls go straight to libc (`open`, `statx`, `mmap`,
 * `pread`, `close`, no Deno op): a file of up to `MAP_MAX` bytes is mapped when it is opened
 * (its pages populated then), and a read copies from the mapping, with no system call at all
 * (a `pread` cost about as much as the rest of a hit); larger ones are read with `pread`.
 * Elsewhere through `Deno.FsFile` (seek and read). Bodies are read into pooled buffers given
 * back once their answer is written (`giveBody`). Not for writes, removals or scans
 * (`disk_store.ts`).
 *
 * A mapped file that shrank in place would kill the process with SIGBUS at the next read past
 * its new end. scalwsd never writes an entry file in place (it renames new ones over them, or
 * removes them, which leaves a mapping whole), and a file is mapped only under a read lease
 * (`F_SETLEASE`): whoever else opens it for writing, or truncates it, waits in the kernel until
 * the lease is given up, and the lease holder is told by SIGIO, on which every file whose lease
 * is being broken is closed (reopened, checked and found short at its next use: a miss). A
 * file that cannot be leased (another user's, a file system without leases) is not mapped.
 *
 * @module
 */

import { MAP_SYMBOLS, type MapCalls, openLibc } from "../base/mod.ts";
import type { Bytes } from "./entry.ts";

/** How files are opened, checked, read and closed (libc over FFI, or `Deno.FsFile`). */
export interface FileCalls {
  /** A descriptor for `path` opened read-only; -1 when it cannot be opened (missing). */
  open(path: string): number;
  /** Size in bytes and link count of the open file into `out`; false on error. */
  stat(fd: number, out: FileStat): boolean;
  /** Bytes read into `buf` from `offset`; -1 on error. */
  pread(fd: number, buf: Uint8Array, offset: number): number;
  close(fd: number): void;
  /** The first `size` bytes of the file mapped read-only; null when it cannot be (no libc). */
  map?(fd: number, size: number): Mapping | null;
  unmap?(m: Mapping): void;
  /** Takes a read lease on `fd` (see the module comment); false when it cannot be had. */
  lease?(fd: number): boolean;
  /** Gives the lease on `fd` up (a file that is not mapped after all). */
  unlease?(fd: number): void;
  /** Whether `fd` still holds its read lease (false while it is being broken). */
  leased?(fd: number): boolean;
}

/** A read-only shared mapping of a whole file. */
export interface Mapping {
  readonly bytes: Uint8Array<ArrayBuffer>;
  readonly pointer: Deno.PointerObject;
}

interface FileStat {
  size: number;
  links: number;
}

const O_RDONLY = 0;
/** `O_CLOEXEC` (the same on x86_64 and arm64 Linux). */
const O_CLOEXEC = 0o2000000;
const AT_EMPTY_PATH = 0x1000;
const STATX_NLINK = 0x4;
const STATX_SIZE = 0x200;
/** `struct statx`: 256 bytes, `stx_nlink` (u32) at 16, `stx_size` (u64) at 40, every arch. */
const STATX_BYTES = 256;
const PROT_READ = 1;
const MAP_SHARED = 1;
/** `MAP_POPULATE` (the same on x86_64 and arm64 Linux): pages read in and mapped at once. */
const MAP_POPULATE = 0x8000;
const F_SETLEASE = 1024;
const F_GETLEASE = 1025;
const F_RDLCK = 0;
const F_UNLCK = 2;
/**
 * Files up to this size are mapped: under it a `pread`'s fixed cost is most of a read; over it
 * the copy is, and mapped pages would count in the process's resident memory (512 open files
 * of at most 64 KiB: 32 MiB at most).
 */
export const MAP_MAX = 65_536;

type Libc = MapCalls & {
  open(path: Uint8Array, flags: number): number;
  statx(dirfd: number, path: Uint8Array, flags: number, mask: number, buf: Uint8Array): number;
  pread(fd: number, buf: Uint8Array, count: number | bigint, offset: number | bigint): number;
  close(fd: number): number;
  fcntl(fd: number, cmd: number, arg: number): number;
};

/** libc's calls, or null where they cannot be had (not Linux, no `--allow-ffi`). */
function libcCalls(): FileCalls | null {
  const c = openLibc({
    ...MAP_SYMBOLS,
    open: { parameters: ["buffer", "i32"], result: "i32" },
    statx: { parameters: ["i32", "buffer", "i32", "u32", "buffer"], result: "i32" },
    pread: { parameters: ["i32", "buffer", "usize", "i64"], result: "isize" },
    close: { parameters: ["i32"], result: "i32" },
    fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
  }) as unknown as Libc | null;
  if (c === null) return null;
  const enc = new TextEncoder();
  let pathBuf = new Uint8Array(1024);
  const empty = new Uint8Array(1);
  const sx = new Uint8Array(STATX_BYTES);
  const sv = new DataView(sx.buffer);
  return {
    open(path) {
      if (path.length * 3 + 1 > pathBuf.length) pathBuf = new Uint8Array(path.length * 3 + 1);
      const n = enc.encodeInto(path, pathBuf).written;
      pathBuf[n] = 0;
      return c.open(pathBuf, O_RDONLY | O_CLOEXEC);
    },
    stat(fd, out) {
      if (c.statx(fd, empty, AT_EMPTY_PATH, STATX_NLINK | STATX_SIZE, sx) !== 0) return false;
      out.links = sv.getUint32(16, true);
      out.size = Number(sv.getBigUint64(40, true));
      return true;
    },
    pread(fd, buf, offset) {
      return Number(c.pread(fd, buf, buf.length, offset));
    },
    close(fd) {
      c.close(fd);
    },
    map(fd, size) {
      const p = c.mmap(null, size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
      // MAP_FAILED is (void *) -1.
      if (p === null || Deno.UnsafePointer.value(p) === 0xffffffffffffffffn) return null;
      return { bytes: new Uint8Array(Deno.UnsafePointerView.getArrayBuffer(p, size)), pointer: p };
    },
    unmap(m) {
      c.munmap(m.pointer, m.bytes.length);
    },
    lease(fd) {
      return watchLeases() && c.fcntl(fd, F_SETLEASE, F_RDLCK) === 0;
    },
    unlease(fd) {
      c.fcntl(fd, F_SETLEASE, F_UNLCK);
    },
    leased(fd) {
      return c.fcntl(fd, F_GETLEASE, 0) === F_RDLCK;
    },
  };
}

/** The sets of open files that hold leases, told when one is being broken. */
const leaseHolders = new Set<{ leaseBroken(): void }>();
let watching: boolean | undefined;

/**
 * Listens for SIGIO, which a lease break sends (once per process; its default action would
 * end the process); false when that cannot be done: no lease is then taken.
 */
function watchLeases(): boolean {
  if (watching !== undefined) return watching;
  try {
    Deno.addSignalListener("SIGIO", () => {
      for (const h of leaseHolders) h.leaseBroken();
    });
    watching = true;
  } catch {
    watching = false;
  }
  return watching;
}

/** `Deno.FsFile` calls: three ops a hit (stat, seek, read), as many as opening anew. */
function denoCalls(): FileCalls {
  const files = new Map<number, Deno.FsFile>();
  let next = 1;
  return {
    open(path) {
      try {
        const f = Deno.openSync(path);
        files.set(next, f);
        return next++;
      } catch {
        return -1;
      }
    },
    stat(fd, out) {
      try {
        const st = files.get(fd)!.statSync();
        out.size = st.size;
        out.links = st.nlink ?? 1;
        return true;
      } catch {
        return false;
      }
    },
    pread(fd, buf, offset) {
      try {
        const f = files.get(fd)!;
        f.seekSync(offset, Deno.SeekMode.Start);
        let at = 0;
        while (at < buf.length) {
          const n = f.readSync(buf.subarray(at));
          if (n === null) break;
          at += n;
        }
        return at;
      } catch {
        return -1;
      }
    },
    close(fd) {
      const f = files.get(fd);
      files.delete(fd);
      try {
        f?.close();
      } catch { /* closed */ }
    },
  };
}

/** One open entry file; `head` is what its first bytes said, decoded once (the file never changes). */
export interface OpenFile<H> {
  readonly fd: number;
  readonly size: number;
  /** The whole file mapped (up to `MAP_MAX` bytes, libc only); null: read with `pread`. */
  readonly mapped: Mapping | null;
  head: H | null;
  used: number;
  /** The shared epoch (`disk_epoch.ts`) at its last check; NaN: none. */
  checked: number;
}

/** Files kept open at most; the least recently used is closed past it. */
export const MAX_OPEN = 512;
/** A file's place in the least-recently-used order is renewed at most this often, in ms. */
export const REORDER_MS = 1000;
/** A file unused this long is closed (it may have been removed: its space is then freed). */
export const IDLE_MS = 30_000;

/**
 * The open entry files of one disk tier (see the module comment), least recently used first
 * (to within `REORDER_MS`).
 */
export class OpenFiles<H> {
  /** By path, least recently used first. */
  private readonly files = new Map<string, OpenFile<H>>();
  private readonly calls: FileCalls;
  private readonly st: FileStat = { size: 0, links: 0 };

  /** `wrap`: tests change what the calls do (a mapping that fails). */
  constructor(
    readonly max = MAX_OPEN,
    calls: "libc" | "deno" = "libc",
    wrap: (c: FileCalls) => FileCalls = (c) => c,
  ) {
    this.calls = wrap((calls === "libc" ? libcCalls() : null) ?? denoCalls());
  }

  /** Files open now. */
  get size(): number {
    return this.files.size;
  }

  /**
   * The open file `path` names now: the one kept open when it is still linked (not checked
   * again while the shared `epoch` is the one of its last check: no file changed since), else
   * `path` opened anew (its `head` null). Null when there is no such file. `epoch`: NaN when
   * there is no shared epoch (every use is checked).
   */
  get(path: string, now: number, epoch = NaN): OpenFile<H> | null {
    const c = this.calls;
    const kept = this.files.get(path);
    if (kept !== undefined) {
      // Used within the last `REORDER_MS` and unchanged: its place in the order is kept (moving
      // it cost a Map deletion and insertion a hit).
      if (kept.checked === epoch && now - kept.used < REORDER_MS) return kept;
      this.files.delete(path);
      if (
        kept.checked === epoch ||
        (c.stat(kept.fd, this.st) && this.st.links > 0 && this.st.size === kept.size)
      ) {
        kept.used = now;
        kept.checked = epoch;
        this.files.set(path, kept);
        return kept;
      }
      this.close(kept);
    }
    const fd = c.open(path);
    if (fd < 0) return null;
    if (!c.stat(fd, this.st)) {
      c.close(fd);
      return null;
    }
    const size = this.st.size;
    let mapped: Mapping | null = null;
    // Leased first, then measured again: a file that shrank before the lease is not mapped
    // past its end (it is found short when read, as any other).
    if (size > 0 && size <= MAP_MAX && c.map !== undefined && c.lease!(fd)) {
      if (c.stat(fd, this.st) && this.st.size === size) mapped = c.map(fd, size);
      // Only mapped files keep a lease: nothing else would give it up when it is broken.
      if (mapped === null) c.unlease!(fd);
      else leaseHolders.add(this);
    }
    const f: OpenFile<H> = { fd, size, mapped, head: null, used: now, checked: epoch };
    this.files.set(path, f);
    if (this.files.size > this.max) {
      const [oldest, o] = this.files.entries().next().value!;
      this.files.delete(oldest);
      this.close(o);
    }
    return f;
  }

  /** Bytes of `f` from `offset` into `buf`; false when fewer were there (a short file). */
  read(f: OpenFile<H>, buf: Uint8Array, offset: number): boolean {
    const m = f.mapped;
    if (m === null) return this.calls.pread(f.fd, buf, offset) === buf.length;
    const end = offset + buf.length;
    if (end > m.bytes.length) return false;
    buf.set(m.bytes.subarray(offset, end));
    return true;
  }

  /** Files mapped now (for tests). */
  get mappedCount(): number {
    let n = 0;
    for (const f of this.files.values()) if (f.mapped !== null) n++;
    return n;
  }

  private close(f: OpenFile<H>): void {
    // Only ever read synchronously (`read` copies out): no view of it outlives this.
    if (f.mapped !== null) this.calls.unmap?.(f.mapped);
    this.calls.close(f.fd);
  }

  /** Closes `path` if open (it was removed or replaced here). */
  drop(path: string): void {
    const f = this.files.get(path);
    if (f === undefined) return;
    this.files.delete(path);
    this.close(f);
  }

  /** Closes the files unused since `before`. */
  closeIdle(before: number): void {
    for (const [path, f] of this.files) {
      if (f.used >= before) break; // least recently used first: the rest are newer
      this.files.delete(path);
      this.close(f);
    }
  }

  closeAll(): void {
    for (const f of this.files.values()) this.close(f);
    this.files.clear();
    leaseHolders.delete(this);
  }

  /**
   * A lease is being broken (SIGIO): someone opens one of the mapped files for writing or
   * truncates it, and waits until it is closed here.
   */
  leaseBroken(): void {
    const c = this.calls;
    for (const [path, f] of this.files) {
      if (f.mapped === null || c.leased!(f.fd)) continue;
      this.files.delete(path);
      this.close(f);
    }
  }
}

/** Pooled body buffers: 16 KiB and 64 KiB; larger bodies get their own. */
const SMALL = 16_384;
const LARGE = 65_536;
const KEEP = 64;
const smallFree: Bytes[] = [];
const largeFree: Bytes[] = [];

/** A buffer of at least `n` bytes for a body (its content is undefined). */
export function takeBody(n: number): Bytes {
  if (n <= SMALL) return smallFree.pop() ?? new Uint8Array(SMALL);
  if (n <= LARGE) return largeFree.pop() ?? new Uint8Array(LARGE);
  return new Uint8Array(n);
}

/** Gives back a buffer from `takeBody`; nothing may use it afterwards. */
export function giveBody(buf: Bytes): void {
  if (buf.length === SMALL) {
    if (smallFree.length < KEEP) smallFree.push(buf);
  } else if (buf.length === LARGE && largeFree.length < KEEP) largeFree.push(buf);
}
