/**
 * A lock shared by the processes of one host: a file created with `O_EXCL`, holding its
 * holder's pid, the time it was taken and a nonce. A lock older than `staleMs` belongs to a
 * holder that crashed or hung, and the next taker removes it. Synchronous: a take is three
 * system calls, cheap beside the member request it guards. Two takers that judge the same lock
 * stale at the same instant can both take it (the later remove wins); the callers here tolerate
 * that (one extra member request, one extra eviction pass).
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
  try {
    const text = Deno.readTextFileSync(path);
    const at = Number(text.split(" ")[1]);
    if (Number.isFinite(at) && at > 0) return at;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
  }
  // Being written, or unreadable: judged by its modification time.
  try {
    return Deno.statSync(path).mtime?.getTime() ?? 0;
  } catch {
    return null;
  }
}

/**
 * Takes the lock at `path`; null when someone holds it and it is younger than `staleMs`.
 * `now`: wall-clock ms (the lock is judged by every process on the host). Errors other than an
 * existing lock (a missing or read-only directory) are thrown.
 */
export function tryLockFile(path: string, staleMs: number, now = Date.now()): LockFile | null {
  const mine = `${Deno.pid} ${now} ${crypto.randomUUID()}`;
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
    const at = lockTime(path);
    if (at !== null && now - at < staleMs) return null;
    try {
      Deno.removeSync(path);
    } catch { /* removed by someone else meanwhile */ }
  }
  return null;
}
