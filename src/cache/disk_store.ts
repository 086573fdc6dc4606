/**
 * The disk tier: stored answers as files under `server.cache.path`, shared by every process of
 * the host that names the same directory and kept across restarts (the format is in
 * `disk_format.ts`). Layout under `PATH/v1/`: `XX/NAME` (XX: the first two hex digits of NAME)
 * holds a key's answer, or its variant index when its answers vary; `XX/NAME-VNAME` holds one
 * variant; `tmp/` holds files being written (renamed into place when whole); `locks/NAME` is a
 * fill in progress (one member request per key per host); `evict.lock` is held by the one
 * process that measures and trims the directory; `usage.json` is what it found last.
 *
 * Reads are synchronous, as nginx reads its cache files without thread pools: keep the path on
 * local storage. Entry files stay open between hits (`disk_files.ts`: checked on every use,
 * closed when replaced, removed, idle or past a bound); a hit reads the body alone into a
 * pooled buffer, the head part having been decoded when the file was opened. Writes, removals
 * and scans are asynchronous. Not for the memory tier (`store.ts`), which stays in
 * front: a hit there touches no file.
 */
import { log, type Series } from "../observe/mod.ts";
import {
  encodeAnswer,
  encodeIndex,
  entryOf,
  frameOf,
  type Head,
  HEADER_SIZE,
  headOf,
  keyOfHead,
  nameOf,
  variantName,
} from "./disk_format.ts";
import { SharedEpoch } from "./disk_epoch.ts";
import { giveBody, IDLE_MS, type OpenFile, OpenFiles, takeBody } from "./disk_files.ts";
import { Entry } from "./entry.ts";
import { type LockFile, lockTime, tryLockFile } from "./lock_file.ts";
import { purgeMatches, type PurgeTarget } from "./store.ts";
import { type HeaderGet, varyMatches, varyValues } from "./vary.ts";

/** A trim leaves the directory at this share of its budget. */
const TRIM_TO = 0.9;
/** A file's modification time (its place in the LRU order) is renewed at most this often. */
const TOUCH_EVERY = 60_000;
/** Paths of keys kept (see `DiskStore.paths`). */
const PATHS_MAX = 4096;
/** Store failures are logged at most this often. */
const WARN_EVERY = 60_000;
/**
 * `e` with a body of its own (for the memory tier, or to keep past its answer): a body read
 * from disk is a view of a pooled buffer (`Entry.lent`) that goes back once it is written.
 */
export function ownBody(e: Entry): Entry {
  const copy = new Entry({ ...e, body: e.body.slice() });
  copy.onDisk = e.onDisk;
  copy.diskFile = e.diskFile;
  copy.seen = e.seen;
  return copy;
}

/** The head part of a file read when it is opened: its first bytes (a longer one is read again). */
const HEAD_READ = 4096;
const headBuf = new Uint8Array(HEAD_READ);

/** Files left in `tmp/` longer than this are a crashed writer's. */
const TMP_STALE = 600_000;

/** A file's head part as kept with its open file: an answer's with its body's offset. */
type DiskHead =
  | Extract<Head, { kind: "index" }>
  | (Extract<Head, { kind: "answer" }> & { readonly offset: number });

/** What one measurement of the directory found (`usage.json`). */
interface Usage {
  bytes: number;
  entries: number;
  at: number;
}

export interface DiskStoreOptions {
  /** `server.cache.path`. */
  readonly root: string;
  /** `server.cache.disk_max_size`. */
  readonly maxBytes: number;
  /** `scalws_cache_store_errors_total`. */
  readonly storeErrors?: Series;
  /** How often a process checks the usage and trims when over budget; default 5 s. */
  readonly checkEvery?: number;
  /** A measurement older than this is redone; default 60 s. */
  readonly measureEvery?: number;
  /** How entry files are read: libc over FFI where it can be had (default), or `Deno.FsFile`. */
  readonly fileCalls?: "libc" | "deno";
}

/** The disk tier (see the module comment). */
export class DiskStore {
  readonly root: string;
  readonly dir: string;
  maxBytes: number;
  private readonly storeErrors: Series | undefined;
  private readonly checkEvery: number;
  private readonly measureEvery: number;
  private readonly touched = new Map<string, number>();
  private readonly files: OpenFiles<DiskHead>;
  /** The counter shared by every process on this directory; null without FFI. */
  private readonly epoch: SharedEpoch | null;
  private lastWarn = -Infinity;
  private usage: Usage = { bytes: 0, entries: 0, at: 0 };
  /** Bytes and files this process wrote since `usage` was measured. */
  private addedBytes = 0;
  private addedEntries = 0;
  /** Files this process wrote while a trim listed the directory (path, size); null otherwise. */
  private writtenInTrim: Map<string, number> | null = null;
  private timer: ReturnType<typeof setInterval> | undefined;
  private checking: Promise<void> | null = null;
  /** This process has measured the directory since it started. */
  private measured = false;
  private seq = 0;
  /** Store failures, for tests and the admin view. */
  storeFailures = 0;

  constructor(o: DiskStoreOptions) {
    this.root = o.root;
    this.dir = `${o.root}/v1`;
    this.maxBytes = o.maxBytes;
    this.storeErrors = o.storeErrors;
    this.checkEvery = o.checkEvery ?? 5_000;
    this.measureEvery = o.measureEvery ?? 60_000;
    this.files = new OpenFiles(undefined, o.fileCalls);
    try {
      Deno.mkdirSync(`${this.dir}/tmp`, { recursive: true, mode: 0o700 });
      Deno.mkdirSync(`${this.dir}/locks`, { recursive: true, mode: 0o700 });
    } catch (err) {
      // Stores fail and are counted then; the directory may also be fixed meanwhile.
      log("warn", "cache_disk_unusable", { path: this.dir, error: String(err) });
      // The minute's warning: the failed stores that follow say nothing more until it passes.
      this.lastWarn = Date.now();
    }
    this.epoch = SharedEpoch.open(this.dir);
    this.readUsage();
  }

  /** Bytes on disk as last measured, plus what this process wrote (less removed) since. */
  get bytes(): number {
    return Math.max(0, this.usage.bytes + this.addedBytes);
  }

  /** Files on disk as last measured, plus what this process wrote (less removed) since. */
  get entries(): number {
    return Math.max(0, this.usage.entries + this.addedEntries);
  }

  /** A file of `size` bytes this process removed (purge, invalidation, corrupt): counted now. */
  private removed(size: number): void {
    this.addedBytes -= size;
    this.addedEntries--;
  }

  /** Starts the periodic check (measure, trim); stopped by `close`. */
  start(): void {
    if (this.timer !== undefined) return;
    const timer = setInterval(() => void this.check(), this.checkEvery);
    Deno.unrefTimer(timer);
    this.timer = timer;
    void this.check();
  }

  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.files.closeAll();
    this.epoch?.close();
  }

  private path(name: string): string {
    return `${this.dir}/${name.slice(0, 2)}/${name}`;
  }

  /**
   * The stored answer under `key` whose selection matches `h`, read from its file; null when
   * there is none. A corrupt or truncated file is removed. The entry's body is lent
   * (`Entry.lent`): `release` it once its answer is written, or `ownBody` it to keep it.
   */
  read(key: string, h: HeaderGet): Entry | null {
    const epoch = this.epochValue;
    const now = Date.now();
    const a = this.answerFile(key, h, epoch, now);
    if (a === null) return null;
    const { f, head, file } = a;
    const n = f.size - head.offset;
    const buf = takeBody(n);
    const body = buf.subarray(0, n);
    if (n > 0 && !this.files.read(f, body, head.offset)) {
      giveBody(buf);
      this.corrupt(file);
      return null;
    }
    this.touch(file, now);
    const e = entryOf(head.meta, body);
    e.onDisk = true;
    e.diskFile = file;
    e.seen = epoch;
    e.lent = buf;
    return e;
  }

  /**
   * Whether memory copy `e` (stored under `key`, selected by `h`) is still what the disk holds
   * for it: false when the file is gone (purged or invalidated by another process) or holds a
   * newer answer (another process stored or refreshed it). Checked once per change of the
   * shared epoch (`e.seen`); without one (no FFI), never. Renews the file's place in the LRU order
   * (at most once a minute) so that a copy served from memory keeps its file.
   */
  holds(key: string, h: HeaderGet, e: Entry, now: number): boolean {
    // Without a shared epoch a memory copy stays until it is stale (checking every hit would
    // cost a memory hit several Deno ops).
    if (this.epoch === null) return true;
    const epoch = this.epoch.value;
    if (e.seen !== epoch) {
      const a = this.answerFile(key, h, epoch, now);
      if (a === null || a.head.meta.responseTime > e.responseTime) return false;
      e.diskFile = a.file;
      e.seen = epoch;
    }
    if (e.diskFile !== "") this.touch(e.diskFile, now);
    return true;
  }

  /** The shared epoch now (`disk_epoch.ts`); NaN without one. */
  get epochValue(): number {
    return this.epoch === null ? NaN : this.epoch.value;
  }

  /**
   * Paths of the files of keys read lately, by key: hashing a key into its name (hex digits)
   * cost more than the rest of a hit's lookup. Emptied when it reaches `PATHS_MAX`.
   */
  private readonly paths = new Map<string, string>();

  /** The path of `key`'s file (see `paths`). */
  private keyPath(key: string): string {
    let path = this.paths.get(key);
    if (path === undefined) {
      if (this.paths.size >= PATHS_MAX) this.paths.clear();
      path = this.path(nameOf(key));
      this.paths.set(key, path);
    }
    return path;
  }

  /** The open answer file under `key` for the selection `h`, its head decoded; null when none. */
  private answerFile(key: string, h: HeaderGet, epoch: number, now: number) {
    const path = this.keyPath(key);
    let f = this.load(path, now, epoch);
    if (f === null || f.head!.key !== key) return null;
    let head = f.head!;
    let file = path;
    if (head.kind === "index") {
      file = this.path(variantName(nameOf(key), varyValues(head.names, h)));
      f = this.load(file, now, epoch);
      if (f === null || f.head!.kind !== "answer" || f.head!.key !== key) return null;
      head = f.head!;
      if (!varyMatches(head.meta.selectNames, head.meta.selectValues, h)) return null;
      this.touch(path, now);
    } else if (head.meta.selectNames.length !== 0) return null;
    if (head.kind !== "answer") return null;
    return { f, head, file };
  }

  /** Gives back the buffer `e`'s body was read into (see `read`); `e` must not be used after. */
  release(e: Entry): void {
    const buf = e.lent;
    if (buf === null) return;
    e.lent = null;
    giveBody(buf);
  }

  /**
   * The open file at `path` with its head part decoded (on the first use since it was opened);
   * null when missing, removed when corrupt.
   */
  private load(path: string, now: number, epoch: number): OpenFile<DiskHead> | null {
    const f = this.files.get(path, now, epoch);
    if (f === null || f.head !== null) return f;
    let b: Uint8Array = headBuf.subarray(0, Math.min(HEAD_READ, f.size));
    const frame = this.files.read(f, b, 0) ? frameOf(b) : null;
    const offset = frame === null ? -1 : HEADER_SIZE + frame.metaLength;
    if (frame === null || offset + frame.bodyLength !== f.size) {
      this.corrupt(path);
      return null;
    }
    if (offset > b.length) {
      b = new Uint8Array(offset);
      if (!this.files.read(f, b, 0)) {
        this.corrupt(path);
        return null;
      }
    }
    const head = headOf(frame, b.subarray(HEADER_SIZE, offset));
    if (head === null) {
      this.corrupt(path);
      return null;
    }
    f.head = head.kind === "index" ? head : { ...head, offset };
    return f;
  }

  /** A corrupt or truncated file: removed (a miss). */
  private corrupt(path: string): void {
    log("warn", "cache_disk_corrupt", { file: path });
    this.files.drop(path);
    try {
      const size = Deno.statSync(path).size;
      Deno.removeSync(path);
      this.epoch?.bump();
      this.removed(size);
    } catch { /* removed meanwhile */ }
  }

  /** Renews a file's place in the LRU order, at most once a minute per file. */
  private touch(path: string, now: number): void {
    const last = this.touched.get(path);
    if (last !== undefined && now - last < TOUCH_EVERY) return;
    if (this.touched.size >= 65_536) this.touched.clear();
    this.touched.set(path, now);
    try {
      const t = new Date(now);
      Deno.utimeSync(path, t, t);
    } catch { /* removed meanwhile */ }
  }

  /**
   * Writes `e` under `key`: into `tmp/`, then renamed into place (readers see the whole file or
   * none). Failures (a full or read-only disk) are counted and logged, never thrown.
   */
  write(key: string, e: Entry): Promise<void> {
    const w = this.writeNow(key, e).finally(() => {
      if (this.writes.get(key) === w) this.writes.delete(key);
    });
    this.writes.set(key, w);
    return w;
  }

  private async writeNow(key: string, e: Entry): Promise<void> {
    const name = nameOf(key);
    try {
      const file = e.selectNames.length === 0
        ? this.path(name)
        : this.path(variantName(name, e.selectValues));
      await this.put(file, encodeAnswer(key, e));
      if (e.selectNames.length !== 0) {
        await this.put(this.path(name), encodeIndex(key, e.selectNames));
      }
      e.onDisk = true;
      e.diskFile = file;
      // Checked at its next use: another process may have changed the file meanwhile.
      e.seen = NaN;
    } catch (err) {
      this.failed("store", key, err);
      return;
    }
    if (this.bytes > this.maxBytes) void this.check();
  }

  private async put(path: string, bytes: Uint8Array<ArrayBuffer>): Promise<void> {
    const tmp = `${this.dir}/tmp/${Deno.pid}-${++this.seq}`;
    // A file replaced (a refreshed answer, a variant index) is counted once, by its new size.
    let replaced = -1;
    try {
      await Deno.writeFile(tmp, bytes, { mode: 0o600 });
      replaced = await Deno.stat(path).then((st) => st.size, () => -1);
      try {
        await Deno.rename(tmp, path);
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
        // The shard's directory does not exist yet (or tmp/ was removed: then this throws).
        await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true, mode: 0o700 });
        await Deno.rename(tmp, path);
      }
    } catch (err) {
      await Deno.remove(tmp).catch(() => {});
      throw err;
    }
    this.files.drop(path);
    this.epoch?.bump();
    this.addedBytes += bytes.length;
    this.addedEntries++;
    if (replaced >= 0) this.removed(replaced);
    this.writtenInTrim?.set(path, bytes.length);
  }

  private failed(what: "store" | "lock", target: string, err: unknown): void {
    // An answer not stored counts; a fill lock not taken only warns (its store counts).
    if (what === "store") {
      this.storeFailures++;
      if (this.storeErrors !== undefined) this.storeErrors.value++;
    }
    this.warn("cache_disk_store_failed", {
      action: what,
      target,
      error: err instanceof Error ? err.message : String(err),
    });
  }

  /** Logs a warning about the directory unless one was logged in the last minute. */
  private warn(event: string, fields: Record<string, unknown>): void {
    const now = Date.now();
    if (now - this.lastWarn < WARN_EVERY) return;
    this.lastWarn = now;
    log("warn", event, fields);
  }

  /** Removes every variant stored under `key`; returns how many answers went. */
  async removeKey(key: string): Promise<number> {
    const name = nameOf(key);
    const shard = `${this.dir}/${name.slice(0, 2)}`;
    const files: string[] = [];
    try {
      for await (const f of Deno.readDir(shard)) {
        if (f.name === name || f.name.startsWith(name + "-")) files.push(f.name);
      }
    } catch {
      return 0;
    }
    let n = 0;
    for (const f of files) n += await this.removeIfKey(`${shard}/${f}`, (k) => k === key);
    return n;
  }

  /** Removes what `t` names; returns how many answers went. */
  async purge(t: PurgeTarget): Promise<number> {
    let n = 0;
    for (const shard of await this.shards()) {
      const files: string[] = [];
      try {
        for await (const f of Deno.readDir(shard)) files.push(f.name);
      } catch {
        continue;
      }
      for (const f of files) {
        n += await this.removeIfKey(`${shard}/${f}`, (k) => purgeMatches(t, k));
      }
    }
    return n;
  }

  /**
   * Removes `file` when the key inside satisfies `match` (or cannot be read: corrupt); 1 when
   * it held an answer.
   */
  private async removeIfKey(file: string, match: (key: string) => boolean): Promise<number> {
    let head: Uint8Array<ArrayBuffer>;
    try {
      using f = await Deno.open(file, { read: true });
      const buf = new Uint8Array(65_536);
      const got = await f.read(buf) ?? 0;
      head = buf.subarray(0, got);
      if (got === buf.length) {
        // A long meta part (many header fields): the whole file then.
        head = await Deno.readFile(file) as Uint8Array<ArrayBuffer>;
      }
    } catch {
      return 0;
    }
    const key = keyOfHead(head);
    if (key !== null && !match(key)) return 0;
    this.files.drop(file);
    try {
      const size = (await Deno.stat(file)).size;
      await Deno.remove(file);
      this.removed(size);
    } catch {
      return 0;
    }
    this.epoch?.bump();
    // Answers are kind 1 (byte 5 of the header).
    return key !== null && head[5] === 1 ? 1 : 0;
  }

  private async shards(): Promise<string[]> {
    const out: string[] = [];
    try {
      for await (const d of Deno.readDir(this.dir)) {
        if (d.isDirectory && d.name.length === 2) out.push(`${this.dir}/${d.name}`);
      }
    } catch { /* no directory: nothing stored */ }
    return out;
  }

  // ---- one member request per key per host ----

  /** Fill locks this process holds, by key. */
  private readonly fills = new Map<string, LockFile>();
  /** Writes under way, by key (a fill lock is released once its write is done). */
  private readonly writes = new Map<string, Promise<void>>();

  /** Records the fill lock this process took for `key` (see `releaseFill`). */
  holdFill(key: string, lock: LockFile): void {
    this.fills.get(key)?.release();
    this.fills.set(key, lock);
  }

  /** Releases the fill lock of `key`, once the answer being written under it is on disk. */
  releaseFill(key: string): void {
    const lock = this.fills.get(key);
    if (lock === undefined) return;
    this.fills.delete(key);
    const w = this.writes.get(key);
    if (w === undefined) lock.release();
    else void w.finally(() => lock.release());
  }

  private lockPath(key: string): string {
    return `${this.dir}/locks/${nameOf(key)}`;
  }

  /**
   * Takes the fill lock of `key` (no other process of the host is asking the member for it);
   * null when another holds it (younger than `staleMs`). A directory that cannot hold locks
   * counts as no contention (the fill goes on, unlocked).
   */
  lockFill(key: string, staleMs: number): LockFile | null | "unlocked" {
    try {
      return tryLockFile(this.lockPath(key), staleMs);
    } catch (err) {
      this.failed("lock", key, err);
      return "unlocked";
    }
  }

  /**
   * Resolves when no process holds the fill lock of `key` any more, when the lock is older than
   * `staleMs` (its holder died or hangs: the caller may take over), or after `maxMs`.
   */
  async waitFill(key: string, staleMs: number, maxMs: number): Promise<void> {
    const path = this.lockPath(key);
    const end = Date.now() + maxMs;
    let pause = 2;
    for (;;) {
      const at = lockTime(path);
      const now = Date.now();
      if (at === null || now - at >= staleMs || now >= end) return;
      await new Promise((r) => setTimeout(r, Math.min(pause, end - now)));
      pause = Math.min(pause * 2, 50);
    }
  }

  // ---- budget ----

  private readUsage(): void {
    try {
      const u = JSON.parse(Deno.readTextFileSync(`${this.dir}/usage.json`));
      if (
        typeof u?.bytes === "number" && typeof u?.entries === "number" &&
        typeof u?.at === "number" && u.at > this.usage.at
      ) {
        this.usage = { bytes: u.bytes, entries: u.entries, at: u.at };
        this.addedBytes = 0;
        this.addedEntries = 0;
      }
    } catch { /* not measured yet */ }
  }

  /**
   * Reads the last measurement; measures and trims (under `evict.lock`, one process of the host
   * at a time) when it is old or the directory is over budget.
   */
  check(): Promise<void> {
    if (this.checking !== null) return this.checking;
    this.checking = (async () => {
      this.files.closeIdle(Date.now() - IDLE_MS);
      this.readUsage();
      const old = !this.measured || Date.now() - this.usage.at >= this.measureEvery;
      if (!old && this.bytes <= this.maxBytes) return;
      await this.trimNow();
    })().catch((err) => this.warn("cache_disk_trim_failed", { error: String(err) }))
      .finally(() => this.checking = null);
    return this.checking;
  }

  /**
   * Measures the directory and removes the least recently used files (oldest modification
   * time: written or last served) until it is within 90% of its budget; leftovers of crashed
   * writers go too. False when another process is doing it.
   */
  async trim(): Promise<boolean> {
    await this.checking;
    return this.trimNow();
  }

  private async trimNow(): Promise<boolean> {
    let lock: LockFile | null;
    try {
      lock = tryLockFile(`${this.dir}/evict.lock`, 300_000);
    } catch {
      return false;
    }
    if (lock === null) return false;
    this.writtenInTrim = new Map();
    try {
      const files: { path: string; size: number; mtime: number }[] = [];
      let bytes = 0;
      for (const shard of await this.shards()) {
        const names: string[] = [];
        try {
          for await (const f of Deno.readDir(shard)) if (f.isFile) names.push(f.name);
        } catch {
          continue;
        }
        for (const name of names) {
          const path = `${shard}/${name}`;
          try {
            const st = await Deno.stat(path);
            files.push({ path, size: st.size, mtime: st.mtime?.getTime() ?? 0 });
            bytes += st.size;
          } catch { /* removed meanwhile */ }
        }
      }
      let entries = files.length;
      if (bytes > this.maxBytes) {
        files.sort((a, b) => a.mtime - b.mtime);
        const goal = this.maxBytes * TRIM_TO;
        for (const f of files) {
          if (bytes <= goal) break;
          this.files.drop(f.path);
          try {
            await Deno.remove(f.path);
            this.epoch?.bump();
            bytes -= f.size;
            entries--;
          } catch { /* removed meanwhile */ }
        }
      }
      await this.sweep(`${this.dir}/tmp`, TMP_STALE);
      await this.sweep(`${this.dir}/locks`, TMP_STALE);
      const usage: Usage = { bytes, entries, at: Date.now() };
      this.measured = true;
      this.usage = usage;
      // Written while the directory was listed, too late to be seen: still counted.
      const listed = new Set(files.map((f) => f.path));
      this.addedBytes = 0;
      this.addedEntries = 0;
      for (const [path, size] of this.writtenInTrim) {
        if (listed.has(path)) continue;
        this.addedBytes += size;
        this.addedEntries++;
      }
      this.writtenInTrim = null;
      const tmp = `${this.dir}/tmp/usage-${Deno.pid}-${++this.seq}`;
      await Deno.writeTextFile(tmp, JSON.stringify(usage));
      await Deno.rename(tmp, `${this.dir}/usage.json`);
    } finally {
      this.writtenInTrim = null;
      lock.release();
    }
    return true;
  }

  /** Removes files in `dir` older than `ageMs`. */
  private async sweep(dir: string, ageMs: number): Promise<void> {
    const now = Date.now();
    try {
      for await (const f of Deno.readDir(dir)) {
        const p = `${dir}/${f.name}`;
        const st = await Deno.stat(p).catch(() => null);
        if (st !== null && now - (st.mtime?.getTime() ?? now) > ageMs) {
          await Deno.remove(p).catch(() => {});
        }
      }
    } catch { /* none */ }
  }
}
