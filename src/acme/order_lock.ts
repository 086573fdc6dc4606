/**
 * One instance orders a given certificate at a time: a lock file created exclusively
 * (`O_EXCL`) in the state directory the instances share, holding the owner's pid and start
 * time. A lock older than `staleMs` (its owner died mid-order) is taken over. Whether the owner
 * still runs is not asked: Deno 2.9.6 lets a program read `/proc/<pid>` only with --allow-all.
 */

export interface HeldLock {
  release(): Promise<void>;
}

/** Takes the lock at `path`, or returns null when another owner holds a fresh one. */
export async function tryLock(
  path: string,
  now: number,
  staleMs: number,
): Promise<HeldLock | null> {
  const mine = JSON.stringify({ pid: Deno.pid, at: now, nonce: crypto.randomUUID() });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const f = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
      try {
        await f.write(new TextEncoder().encode(mine));
      } finally {
        f.close();
      }
      return {
        release: async () => {
          // Only our own lock goes: a taken-over one belongs to someone else now.
          const text = await Deno.readTextFile(path).catch(() => "");
          if (text === mine) await Deno.remove(path).catch(() => {});
        },
      };
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    }
    let at = 0;
    try {
      const held = JSON.parse(await Deno.readTextFile(path));
      at = typeof held?.at === "number" ? held.at : 0;
    } catch {
      // Unreadable or half written: judge it by its modification time.
      const st = await Deno.stat(path).catch(() => null);
      at = st?.mtime?.getTime() ?? 0;
    }
    if (now - at < staleMs) return null;
    await Deno.remove(path).catch(() => {});
  }
  return null;
}
