/**
 * Atomic file replacement: write a temporary file beside the target, fsync it, rename it over
 * the target and fsync the directory, so a reader (or a controller restarted after a crash)
 * sees either the old content or the new one, never a partial file.
 */
import { dirname } from "node:path";

let seq = 0;

/** Writes `data` to `path` atomically with `mode` (default 0600, owner only). */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  mode = 0o600,
): Promise<void> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const tmp = `${path}.tmp-${Deno.pid}-${++seq}`;
  const file = await Deno.open(tmp, { write: true, create: true, truncate: true, mode });
  try {
    // The umask can only clear bits; chmod makes the mode exact.
    await Deno.chmod(tmp, mode);
    let off = 0;
    while (off < bytes.length) off += await file.write(bytes.subarray(off));
    await file.sync();
  } catch (err) {
    file.close();
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
  file.close();
  try {
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
  await syncDir(dirname(path));
}

/** Fsyncs a directory so that a rename in it survives a crash. */
export async function syncDir(dir: string): Promise<void> {
  const d = await Deno.open(dir, { read: true });
  try {
    await d.sync();
  } finally {
    d.close();
  }
}

/** Creates `dir` and its parents with mode 0700 when missing. */
export async function ensureDir(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
}
