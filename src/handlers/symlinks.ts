/**
 * Which files a `static` or `php` runtime may reach through symlinks, by its `follow_symlinks`
 * and `allowed_roots`: `inside_root` (the default) follows a link only when it ends under the
 * root, `owner_match` follows a link when the link and what it leads to have the same owner
 * (nginx's `disable_symlinks if_not_owner`, checked on the path below the root), `always`
 * follows every link. A file whose real path is under one of `allowed_roots` is reached
 * whatever the mode. This decides reachability only; what a file is served as is the caller's.
 */
import type { FollowSymlinks } from "../config/mod.ts";

/** Whether `real` is `dir` or under it (`dir` is a real path). */
export function under(dir: string, real: string): boolean {
  return real === dir || real.startsWith(dir === "/" ? "/" : dir + "/");
}

/** `follow_symlinks` and `allowed_roots` of one runtime, applied to paths under its root. */
export class SymlinkRule {
  /** `allowed_roots` as real paths, resolved at first use (a missing one allows nothing). */
  #allowed: readonly string[] | null = null;

  constructor(
    readonly follow: FollowSymlinks = "inside_root",
    readonly allowedRoots: readonly string[] = [],
  ) {}

  /**
   * The real path of `root + rel` when this rule lets a request reach it, else null. `root` is
   * a real path, `rel` a decoded normalised path starting with `/`. `Deno.realPath`'s errors
   * (missing, not a directory, permission) pass through.
   */
  async resolve(root: string, rel: string): Promise<string | null> {
    const literal = root === "/" ? rel : root + rel;
    const real = await Deno.realPath(literal);
    // The default rule costs what it always did: one realpath and a prefix test.
    if (this.follow === "inside_root" && under(root, real)) return real;
    if (this.follow === "always") return real;
    // No link below the root: realpath changed nothing but a trailing slash.
    if (real === trimSlash(literal)) return real;
    if (this.allowedRoots.length > 0) {
      this.#allowed ??= await realRoots(this.allowedRoots);
      for (const dir of this.#allowed) if (under(dir, real)) return real;
    }
    if (this.follow === "owner_match" && await ownersMatch(root, rel)) return real;
    return null;
  }
}

/** The default rule: links followed only when they end under the root. */
export const INSIDE_ROOT = new SymlinkRule();

function trimSlash(path: string): string {
  let end = path.length;
  while (end > 1 && path.charCodeAt(end - 1) === 47) end--;
  return end === path.length ? path : path.slice(0, end);
}

async function realRoots(dirs: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const dir of dirs) {
    try {
      out.push(await Deno.realPath(dir));
    } catch {
      // A tree that does not exist (yet) allows nothing; it is looked up again on reload.
    }
  }
  return out;
}

/** Every symlink on `rel` below `root` has the owner of what it leads to. */
async function ownersMatch(root: string, rel: string): Promise<boolean> {
  let path = root === "/" ? "" : root;
  for (const segment of rel.split("/")) {
    if (segment === "") continue;
    path += "/" + segment;
    const link = await Deno.lstat(path);
    if (!link.isSymlink) continue;
    const target = await Deno.stat(path);
    if (link.uid === null || link.uid !== target.uid) return false;
  }
  return true;
}
