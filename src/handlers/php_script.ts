/**
 * Which PHP script a request runs, if any. The path is split after its first segment ending in
 * `.php` (nginx's `^(.+?\.php)(/.*)$`): that prefix is the script, the rest `PATH_INFO`. A
 * script runs only when it exists as a regular file the runtime's symlink rule reaches (see
 * `symlinks.ts`; by default: under the root after resolving symlinks) and its resolved name
 * ends in `.php` too: `/uploads/evil.jpg/x.php` looks for a file named
 * `x.php` and never runs `evil.jpg`. Paths without `.php` are files (served statically),
 * directories (their `index`), or missing (the front controller, else 404).
 */

import { INSIDE_ROOT, type SymlinkRule } from "./symlinks.ts";

/** A script to run. */
export interface Script {
  readonly kind: "script";
  /** The resolved file (`SCRIPT_FILENAME`). */
  readonly filename: string;
  /** The URL path of the script (`SCRIPT_NAME`). */
  readonly scriptName: string;
  /** What followed the script in the path (`PATH_INFO`), "" when nothing. */
  readonly pathInfo: string;
}

/** Not a script: the static handler answers (a file, or a directory without a trailing slash). */
export const STATIC = "static";

export type Resolved = Script | typeof STATIC | number;

/** What resolution needs: the root already resolved, the decoded normalised path. */
export interface ScriptQuery {
  /** `realPath(root)`. */
  readonly root: string;
  /** Decoded request path, normalised (no `.`/`..` segments), starting with `/`. */
  readonly path: string;
  readonly index: string;
  /** `/index.php` or undefined. */
  readonly frontController?: string;
  /** Which symlinks are followed; default `INSIDE_ROOT`. */
  readonly links?: SymlinkRule;
}

/** The real path of `rel` under `root` when the rule reaches it, else null (missing, refused). */
async function real(q: ScriptQuery, rel: string): Promise<string | null> {
  try {
    return await (q.links ?? INSIDE_ROOT).resolve(q.root, rel);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return null;
    }
    if (err instanceof Deno.errors.PermissionDenied) return null;
    throw err;
  }
}

/** `rel` as a runnable script: a regular `.php` file the rule reaches, else null. */
async function scriptFile(q: ScriptQuery, rel: string): Promise<string | null> {
  const r = await real(q, rel);
  if (r === null || !r.endsWith(".php")) return null;
  try {
    return (await Deno.stat(r)).isFile ? r : null;
  } catch {
    return null;
  }
}

/** The index of the first path segment ending in `.php` (the index after it), or -1. */
export function splitAfterPhp(path: string): number {
  let from = 0;
  for (;;) {
    const i = path.indexOf(".php", from);
    if (i < 0) return -1;
    const after = i + 4;
    // A segment's end, and not the whole segment ".php" after a slash.
    if ((after === path.length || path[after] === "/") && path[i - 1] !== "/") return after;
    from = i + 1;
  }
}

async function front(q: ScriptQuery): Promise<Resolved> {
  const fc = q.frontController;
  if (fc === undefined) return 404;
  const f = await scriptFile(q, fc);
  if (f === null) return 404;
  return { kind: "script", filename: f, scriptName: fc, pathInfo: "" };
}

/** Resolves a request path to a script, the static handler, or a status (404, 403). */
export async function resolveScript(q: ScriptQuery): Promise<Resolved> {
  const path = q.path;
  const cut = splitAfterPhp(path);
  if (cut >= 0) {
    const scriptName = path.slice(0, cut);
    const f = await scriptFile(q, scriptName);
    if (f !== null) return { kind: "script", filename: f, scriptName, pathInfo: path.slice(cut) };
    // A .php path that is no script (missing, a directory, escaping) is never served as a file.
    return front(q);
  }
  const r = await real(q, path);
  if (r === null) return front(q);
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(r);
  } catch {
    return front(q);
  }
  // PHP source is never sent as a file, also when a symlink without `.php` leads to it.
  if (info.isFile) return r.endsWith(".php") ? 403 : STATIC;
  if (!info.isDirectory) return 403;
  if (!path.endsWith("/")) return STATIC; // the static handler redirects to the slash form
  const index = path + q.index;
  if (q.index.endsWith(".php")) {
    const f = await scriptFile(q, index);
    if (f !== null) return { kind: "script", filename: f, scriptName: index, pathInfo: "" };
  } else if (await real(q, index) !== null) return STATIC;
  // A directory without its index: the application decides, as with a missing file.
  return q.frontController !== undefined ? front(q) : 403;
}
