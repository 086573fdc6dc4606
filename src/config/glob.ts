/**
 * `server.include` globs: `*` (any run of characters but `/`), `?` (one character) and
 * `[abc]` / `[a-z]` / `[!a]` classes, in any path segment; no `**`. A pattern without a
 * wildcard names one file, which must exist. Matches are files only, sorted, hidden files
 * (`.name`) only when the segment itself starts with a dot.
 */

/** The directory listing a glob needs (tests inject one). */
export type ListDir = (dir: string) => { name: string; isFile: boolean; isDirectory: boolean }[];

export const listDirSync: ListDir = (dir) =>
  [...Deno.readDirSync(dir)].map((e) => ({
    name: e.name,
    // A symlink to a file counts as a file, the way a shell glob sees it.
    isFile: e.isFile || (e.isSymlink && safeStat(`${dir}/${e.name}`)?.isFile === true),
    isDirectory: e.isDirectory ||
      (e.isSymlink && safeStat(`${dir}/${e.name}`)?.isDirectory === true),
  }));

function safeStat(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.statSync(path);
  } catch {
    return undefined;
  }
}

const WILD = /[*?[]/;

/** Whether `text` has a glob character. */
export function isGlob(text: string): boolean {
  return WILD.test(text);
}

/** A segment pattern as a RegExp (anchored); throws on `**` or an unclosed class. */
export function segmentRegExp(segment: string): RegExp {
  if (segment.includes("**")) throw new Error('"**" is not supported');
  let re = "^";
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i];
    if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const close = segment.indexOf("]", i + 2);
      if (close < 0) throw new Error(`unclosed "[" in "${segment}"`);
      let body = segment.slice(i + 1, close);
      if (body.startsWith("!")) body = "^" + body.slice(1);
      re += "[" + body.replace(/\\/g, "\\\\") + "]";
      i = close;
    } else re += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return new RegExp(re + "$");
}

/**
 * The files `pattern` matches, relative patterns taken from `dir`; each result is `dir`
 * joined with the matched relative path (or the absolute path). Throws `Error` with a message
 * for a bad pattern or a missing literal file.
 */
export function expandGlob(pattern: string, dir: string, listDir: ListDir = listDirSync): string[] {
  const absolute = pattern.startsWith("/");
  const segments = pattern.split("/").filter((s) => s !== "" && s !== ".");
  const root = absolute ? "" : dir === "" ? "." : dir.replace(/\/$/, "");
  if (!isGlob(pattern)) {
    const file = absolute ? pattern : `${root}/${segments.join("/")}`;
    const entries = (() => {
      try {
        return Deno.statSync(file);
      } catch {
        return undefined;
      }
    })();
    if (entries === undefined || !entries.isFile) throw new Error(`no such file "${file}"`);
    return [file];
  }
  let current = [root];
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i];
    const last = i === segments.length - 1;
    const next: string[] = [];
    if (!isGlob(seg)) {
      for (const c of current) next.push(`${c}/${seg}`);
      current = next;
      continue;
    }
    const re = segmentRegExp(seg);
    for (const c of current) {
      let entries;
      try {
        entries = listDir(c === "" ? "/" : c);
      } catch {
        continue; // a directory that is not there matches nothing
      }
      const names = entries
        .filter((e) => (last ? e.isFile : e.isDirectory))
        .map((e) => e.name)
        .filter((n) => re.test(n) && (!n.startsWith(".") || seg.startsWith(".")))
        .sort();
      for (const n of names) next.push(`${c}/${n}`);
    }
    current = next;
  }
  return current;
}
