/**
 * SIGUSR1 for log reopening, without Deno's debugger.
 *
 * Deno 2.9.2+ (`deno run`; denoland/deno pull request 35738) starts the V8 inspector on
 * 127.0.0.1:9229 when the process gets SIGUSR1, 500 ms after start, whatever
 * `Deno.addSignalListener` does; it offers no switch (no flag, variable or option). Its handler
 * and every JavaScript listener share one process-wide `sigaction` handler, so the signal must
 * never reach a handler at all: it must stay blocked in every thread. A thread inherits its
 * creator's signal mask and `execve` keeps the caller's, so {@linkcode blockUsr1} blocks the
 * signal in the calling thread and re-executes the process in place (same PID, arguments,
 * environment and open descriptors); every thread of the new image is then born with SIGUSR1
 * blocked. {@linkcode Usr1Watch} takes the pending signal with `sigtimedwait` on a timer, or
 * with `sigwaitinfo` on a thread of its own.
 * Children started with `Deno.Command` get an empty mask (Rust's spawn resets it).
 *
 * Linux only (the mask layout, `/proc`); elsewhere the guard reports why it did nothing.
 * Not for short commands (`check`, `ctl`): only long-running processes re-execute.
 * `tests/signals_test.ts` holds the canary that fails when Deno's behaviour changes.
 */

const SIGUSR1 = 10;
const SIG_BLOCK = 0;
/** `sigset_t` in glibc and musl: 1024 bits. */
const SIGSET_BYTES = 128;
const O_RDONLY = 0;

const SYMBOLS = {
  sigprocmask: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
  sigtimedwait: { parameters: ["buffer", "pointer", "buffer"], result: "i32" },
  execve: { parameters: ["buffer", "buffer", "pointer"], result: "i32" },
  open: { parameters: ["buffer", "i32"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  close: { parameters: ["i32"], result: "i32" },
  environ: { type: "pointer" },
  kill: { parameters: ["i32", "i32"], result: "i32" },
} as const;

/** `sigwaitinfo` on a thread of its own (Deno's blocking pool): the event loop is not woken. */
const WAIT_SYMBOLS = {
  sigwaitinfo: { parameters: ["buffer", "pointer"], result: "i32", nonblocking: true },
} as const;

type Libc = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

let libc: Libc | null = null;
/** The name `libc` was opened by. */
let libcName: string | null = null;

/** libc, or the reason it cannot be used. */
function open(): Libc | string {
  if (libc !== null) return libc;
  if (Deno.build.os !== "linux") return `SIGUSR1 is not guarded on ${Deno.build.os}`;
  for (const name of ["libc.so.6", "libc.so", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"]) {
    try {
      libc = Deno.dlopen(name, SYMBOLS).symbols;
      libcName = name;
      return libc;
    } catch (err) {
      if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
        return "SIGUSR1 is not guarded: the process lacks --allow-ffi";
      }
    }
  }
  return "SIGUSR1 is not guarded: libc cannot be opened";
}

/** A `sigset_t` holding SIGUSR1 alone. */
function usr1Set(): Uint8Array {
  const set = new Uint8Array(SIGSET_BYTES);
  set[(SIGUSR1 - 1) >> 3] = 1 << ((SIGUSR1 - 1) & 7);
  return set;
}

/** Whether SIGUSR1 is blocked in the calling thread. */
export function usr1Blocked(): boolean {
  const c = open();
  if (typeof c === "string") return false;
  const old = new Uint8Array(SIGSET_BYTES);
  c.sigprocmask(SIG_BLOCK, null, old);
  return (old[(SIGUSR1 - 1) >> 3] & (1 << ((SIGUSR1 - 1) & 7))) !== 0;
}

/** This process's argument vector, NUL-terminated strings (`/proc/self/cmdline`, through libc). */
function cmdline(c: Libc): Uint8Array | null {
  const fd = c.open(new TextEncoder().encode("/proc/self/cmdline\0"), O_RDONLY);
  if (fd < 0) return null;
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const buf = new Uint8Array(65536);
    const n = Number(c.read(fd, buf, BigInt(buf.length)));
    if (n <= 0) break;
    chunks.push(buf.subarray(0, n));
    total += n;
  }
  c.close(fd);
  if (total === 0) return null;
  const out = new Uint8Array(total);
  let off = 0;
  for (const ch of chunks) {
    out.set(ch, off);
    off += ch.length;
  }
  return out;
}

/** This executable's path, or null (no read permission, or gone from the disk). */
function execPath(): string | null {
  try {
    return Deno.execPath();
  } catch {
    return null;
  }
}

/**
 * Makes SIGUSR1 blocked in every thread of this process: returns `null` when it is (already, or
 * after a re-execution, which does not return here), else why not (the caller logs it: the
 * process then runs as before, and SIGUSR1 opens Deno's inspector).
 */
export function blockUsr1(): string | null {
  const c = open();
  if (typeof c === "string") return c;
  if (usr1Blocked()) return null;
  const argv = cmdline(c);
  if (argv === null) return "SIGUSR1 is not guarded: /proc/self/cmdline cannot be read";
  // Pointers into `argv`, NULL-terminated; `argv` stays referenced until execve returns.
  const starts: number[] = [0];
  for (let i = 0; i < argv.length - 1; i++) if (argv[i] === 0) starts.push(i + 1);
  const ptrs = new BigUint64Array(starts.length + 1);
  const base = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(argv)));
  for (let i = 0; i < starts.length; i++) ptrs[i] = base + BigInt(starts[i]);
  const environ = new Deno.UnsafePointerView(c.environ!).getPointer(0);
  c.sigprocmask(SIG_BLOCK, usr1Set(), null);
  // By its own path first: the kernel names the process after the file executed (`deno`,
  // `scalwsd` in ps, top and ss), where `/proc/self/exe` would name it `exe`.
  for (const exe of [execPath(), "/proc/self/exe"]) {
    if (exe === null) continue;
    c.execve(new TextEncoder().encode(`${exe}\0`), new Uint8Array(ptrs.buffer), environ);
  }
  return "SIGUSR1 is not guarded: re-executing the process failed";
}

/**
 * Calls `fn` once per SIGUSR1 taken (signals that arrive between two takes count once): with
 * `everyMs` above 0, polling that often with a timer that does not keep the process alive;
 * with 0, from a thread that waits in `sigwaitinfo` (no timer, no wake-up of the event loop
 * until a signal comes: an idle `scalwsd run` sleeps). A waiting thread keeps the event loop
 * alive: for processes that end with `Deno.exit`. Requires {@linkcode blockUsr1} to have
 * succeeded; otherwise it never fires.
 */
export class Usr1Watch {
  private timer: ReturnType<typeof setInterval> | undefined;
  private waiting = false;
  private guarded = false;

  constructor(fn: () => void, everyMs = 1000) {
    const c = open();
    if (typeof c === "string" || !usr1Blocked()) return;
    this.guarded = true;
    const set = usr1Set();
    if (everyMs <= 0) {
      this.wait(set, fn);
      return;
    }
    const zero = new Uint8Array(16); // struct timespec {0, 0}: do not wait
    const timer = setInterval(() => {
      if (c.sigtimedwait(set, null, zero) === SIGUSR1) fn();
    }, everyMs);
    Deno.unrefTimer(timer);
    this.timer = timer;
  }

  private async wait(set: Uint8Array, fn: () => void): Promise<void> {
    let lib: Deno.DynamicLibrary<typeof WAIT_SYMBOLS>;
    try {
      lib = Deno.dlopen(libcName!, WAIT_SYMBOLS);
    } catch {
      this.guarded = false;
      return;
    }
    this.waiting = true;
    while (this.waiting) {
      const sig = await lib.symbols.sigwaitinfo(set, null);
      if (sig === SIGUSR1 && this.waiting) fn();
    }
    lib.close();
  }

  /** Whether signals are being taken. */
  get active(): boolean {
    return this.guarded;
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    if (this.waiting) {
      this.waiting = false;
      // Wakes the waiting thread (the signal stays blocked: it is only taken there).
      const c = open();
      if (typeof c !== "string") c.kill(Deno.pid, SIGUSR1);
    }
  }
}
