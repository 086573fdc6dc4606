/**
 * One instance orders a given certificate at a time: a lock file created exclusively
 * (`O_EXCL`) in the state directory the instances share, holding the owner's host, pid and
 * start time. A lock is taken over when it is older than `staleMs`, or at once when its owner
 * ran on this host and its process is gone (it died mid-order).
 */

export interface HeldLock {
  release(): Promise<void>;
}

function hostname(): string {
  try {
    return Deno.hostname();
  } catch {
    return "";
  }
}

/** Whether process `pid` of this host is gone (false when that cannot be told). */
async function gone(pid: number): Promise<boolean> {
  if (pid === Deno.pid) return false;
  try {
    await Deno.stat(`/proc/${pid}`);
    return false;
  } catch (err) {
    return err instanceof Deno.errors.NotFound && (await Deno.stat("/proc/self").then(
      () => true,
      () => false,
    ));
  }
}

/** Takes the lock at `path`, or returns null when a live owner holds a fresh one. */
export async function tryLock(
  path: string,
  now: number,
  staleMs: number,
): Promise<HeldLock | null> {
  const host = hostname();
  const mine = JSON.stringify({ host, pid: Deno.pid, at: now, nonce: crypto.randomUUID() });
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
    let dead = false;
    try {
      const held = JSON.parse(await Deno.readTextFile(path));
      at = typeof held?.at === "number" ? held.at : 0;
      if (held?.host === host && host !== "" && typeof held.pid === "number") {
        dead = await gone(held.pid);
      }
    } catch {
      // Unreadable or half written: judge it by its modification time.
      const st = await Deno.stat(path).catch(() => null);
      at = st?.mtime?.getTime() ?? 0;
    }
    if (!dead && now - at < staleMs) return null;
    await Deno.remove(path).catch(() => {});
  }
  return null;
}
