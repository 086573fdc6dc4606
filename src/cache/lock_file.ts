/**
 * A lock shared by the processes of one host: a file created with `O_EXCL`, holding its
 * holder's pid, the time it was taken and a nonce. A lock older than `staleMs` belongs to a
 * holder that crashed or hung, and the next taker removes it. Synchronous: a take is three
 * system calls, cheap beside the member request it guards.
 */

const enc = new TextEncoder();

/** A lock this process holds. */
export class LockFile {
  constructor(readonly path: string, private readonly mine: string) {}

  /** Removes the lock if it is still this one (a taken-over lock belongs to its new holder). */
  release(): void {
    try {
      if (Deno.readTextFileSync(this.path) === this.mine) Deno.removeSync(this.path);
    } catch { /* gone already */ }
  }
}

/** When the lock at `path` was taken (ms), or null when there is none. */
export function lockTime(path: string): number | null {
  const held = readLock(path);
  return held === null ? null : held.at;
}

/** The lock's text and when it was taken; null when there is none. */
function readLock(path: string): { text: string; at: number } | null {
  let text = "";
  try {
    text = Deno.readTextFileSync(path);
    const at = Number(text.split(" ")[1]);
    if (Number.isFinite(at) && at > 0) return { text, at };
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
  }
  // Being written, or unreadable: judged by its modification time.
  try {
    return { text, at: Deno.statSync(path).mtime?.getTime() ?? 0 };
  } catch {
    return null;
  }
}

/**
 * Takes the lock at `path`; null when someone holds it and it is younger than `staleMs`.
 * `now`: wall-clock ms (the lock is judged by every process on the host). A stale lock is moved
 * aside (one rename: of two takers only one moves it) and checked to be the one judged stale; a
 * fresh lock moved by mistake is put back. Errors other than an existing lock (a missing or
 * read-only directory) are thrown.
 */
export function tryLockFile(path: string, staleMs: number, now = Date.now()): LockFile | null {
  const nonce = crypto.randomUUID();
  const mine = `${Deno.pid} ${now} ${nonce}`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const f = Deno.openSync(path, { write: true, createNew: true, mode: 0o600 });
      try {
        f.writeSync(enc.encode(mine));
      } finally {
        f.close();
      }
      return new LockFile(path, mine);
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    }
    const held = readLock(path);
    if (held !== null && now - held.at < staleMs) return null;
    if (held === null) continue;
    const aside = `${path}.${nonce}`;
    try {
      Deno.renameSync(path, aside);
    } catch {
      continue; // moved by another taker
    }
    let moved = "";
    try {
      moved = Deno.readTextFileSync(aside);
    } catch { /* unreadable: compared as empty */ }
    if (moved !== held.text) {
      // Another taker's fresh lock: back in place unless a third one holds it by now.
      try {
        Deno.linkSync(aside, path);
      } catch { /* held anyway */ }
      Deno.removeSync(aside);
      return null;
    }
    Deno.removeSync(aside);
  }
  return null;
}
