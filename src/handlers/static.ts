/**
 * `runtime: {type: static}`: files under `root` with the `index` file for directories, symlink
 * rules, content types, a strong ETag, conditional and range requests; small files read whole,
 * larger ones streamed. A directory without its index file is not listed.
 *
 * @module
 */

import type { StaticRuntime } from "../config/mod.ts";
import type { Exchange, Handler } from "../pipeline/mod.ts";
import { plain } from "../base/mod.ts";
import { contentType } from "./mime.ts";
import { INSIDE_ROOT, SymlinkRule } from "./symlinks.ts";

/** Files up to this size are read whole and answered from memory; larger ones stream. */
export const SMALL_FILE = 65_536;

/** A byte range resolved against the file size. */
export interface ByteRange {
  readonly start: number;
  /** Inclusive. */
  readonly end: number;
}

/**
 * Parses a `Range: bytes=...` header against a file of `size` bytes. Returns null when the
 * header is to be ignored (absent, malformed, several ranges, another unit, last before
 * first), "unsatisfiable" when no byte of the range exists (416).
 */
export function parseRange(
  header: string | null,
  size: number,
): ByteRange | null | "unsatisfiable" {
  if (header === null) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (m === null || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  if (m[2] !== "" && Number(m[2]) < start) return null;
  if (start >= size) return "unsatisfiable";
  const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  return { start, end };
}

function etagOf(info: Deno.FileInfo): string {
  const mtime = info.mtime?.getTime() ?? 0;
  return `"${info.size.toString(16)}-${mtime.toString(16)}"`;
}

/** `If-None-Match` (weak comparison) or `If-Match` (strong) against our strong ETag. */
function etagListed(header: string, etag: string, weak: boolean): boolean {
  if (header.trim() === "*") return true;
  for (const part of header.split(",")) {
    const t = part.trim();
    if (t === etag || (weak && t === `W/${etag}`)) return true;
  }
  return false;
}

/** Whole seconds, as HTTP dates carry them. */
function seconds(d: Date | null): number {
  return d === null ? 0 : Math.floor(d.getTime() / 1000);
}

const NOT_FOUND = "Not Found";
const FORBIDDEN = "Forbidden";

function answer(ex: Exchange, status: number, text: string): Response {
  ex.answered(status);
  return plain(status, text);
}

/** The real path of a file under `root`, or the status that answers the request instead. */
type Located = { real: string; info: Deno.FileInfo; name: string } | number;

/**
 * Serves files under `root` with nginx's `root` semantics (the whole request path is appended
 * to it): GET and HEAD, ETag and Last-Modified with conditional requests (304, 412), single
 * byte ranges (206, 416), content types by extension, `index` for directories (a directory
 * without one is 403, as is anything not a regular file or not readable), 404 for anything
 * missing, and for symlinks its `follow_symlinks` and `allowed_roots` do not follow (see
 * `symlinks.ts`).
 */
export class StaticHandler implements Handler {
  private rootReal: string | null = null;
  /** Which symlinks lead somewhere (shared with the PHP handler's script lookup). */
  readonly links: SymlinkRule;

  constructor(readonly runtime: StaticRuntime) {
    this.links = runtime.follow_symlinks === "inside_root" && runtime.allowed_roots.length === 0
      ? INSIDE_ROOT
      : new SymlinkRule(runtime.follow_symlinks, runtime.allowed_roots);
  }

  private async root(): Promise<string> {
    this.rootReal ??= await Deno.realPath(this.runtime.root);
    return this.rootReal;
  }

  private async locate(ex: Exchange): Promise<Located> {
    let rel: string;
    try {
      rel = decodeURIComponent(ex.path);
    } catch {
      return 400;
    }
    // The path is normalised; a decoded "%2F.." could still climb.
    if (rel.includes("\0") || rel.split("/").some((s) => s === "..")) return 404;
    let root: string;
    try {
      root = await this.root();
    } catch {
      return 404;
    }
    const links = this.links;
    try {
      let real = await links.resolve(root, rel);
      if (real === null) return 404;
      let info = await Deno.stat(real);
      let name = rel;
      if (info.isDirectory) {
        if (!ex.path.endsWith("/")) return 301;
        try {
          real = await links.resolve(root, rel + this.runtime.index);
        } catch (err) {
          // A directory without its index file is not listed.
          if (err instanceof Deno.errors.NotFound) return 403;
          throw err;
        }
        if (real === null) return 404;
        info = await Deno.stat(real);
        name = this.runtime.index;
      }
      if (!info.isFile) return 403;
      // A file named as a directory ("/a.txt/"): not found, as nginx answers.
      if (name === rel && rel.endsWith("/")) return 404;
      return { real, info, name };
    } catch (err) {
      return err instanceof Deno.errors.PermissionDenied ? 403 : 404;
    }
  }

  async handle(ex: Exchange): Promise<Response> {
    const method = ex.req.method;
    if (method !== "GET" && method !== "HEAD") {
      ex.answered(405);
      return plain(405, "Method Not Allowed", { allow: "GET, HEAD" });
    }
    const found = await this.locate(ex);
    if (typeof found === "number") {
      switch (found) {
        case 301:
          ex.answered(301);
          return new Response(null, {
            status: 301,
            headers: { location: ex.path + "/" + ex.query },
          });
        case 400:
          return answer(ex, 400, "Bad Request: invalid path encoding");
        case 403:
          return answer(ex, 403, FORBIDDEN);
        default:
          return answer(ex, 404, NOT_FOUND);
      }
    }
    const { real, info, name } = found;
    const h = ex.req.headers;
    const etag = etagOf(info);
    const lastModified = (info.mtime ?? new Date(0)).toUTCString();
    const mtime = seconds(info.mtime);

    // RFC 9110 section 13.2.2: If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since.
    const im = h.get("if-match");
    const ius = im === null ? h.get("if-unmodified-since") : null;
    if (
      (im !== null && !etagListed(im, etag, false)) ||
      (ius !== null && !Number.isNaN(Date.parse(ius)) && mtime > Date.parse(ius) / 1000)
    ) {
      return answer(ex, 412, "Precondition Failed");
    }
    const inm = h.get("if-none-match");
    const ims = inm === null ? h.get("if-modified-since") : null;
    if (
      (inm !== null && etagListed(inm, etag, true)) ||
      (ims !== null && info.mtime !== null && mtime <= Date.parse(ims) / 1000)
    ) {
      ex.answered(304);
      return new Response(null, { status: 304, headers: { etag, "last-modified": lastModified } });
    }

    const headers: Record<string, string> = {
      "content-type": contentType(name),
      etag,
      "last-modified": lastModified,
      "accept-ranges": "bytes",
    };
    let range = parseRange(h.get("range"), info.size);
    const ifRange = h.get("if-range");
    if (range !== null && ifRange !== null && ifRange !== etag && ifRange !== lastModified) {
      range = null;
    }
    if (range === "unsatisfiable") {
      ex.answered(416);
      return new Response(null, {
        status: 416,
        headers: { "content-range": `bytes */${info.size}` },
      });
    }
    const start = range === null ? 0 : range.start;
    const length = range === null ? info.size : range.end - range.start + 1;
    if (range !== null) headers["content-range"] = `bytes ${range.start}-${range.end}/${info.size}`;
    const status = range === null ? 200 : 206;
    ex.answered(status);
    headers["content-length"] = String(length);
    if (method === "HEAD") return new Response(null, { status, headers });
    ex.sent(length);
    if (info.size <= SMALL_FILE) {
      const bytes = await Deno.readFile(real);
      // The file changed size since stat: its length no longer matches what was promised.
      if (bytes.length !== info.size) return answer(ex, 503, "Service Unavailable: file changed");
      return new Response(range === null ? bytes : bytes.subarray(start, start + length), {
        status,
        headers,
      });
    }
    const file = await Deno.open(real, { read: true });
    try {
      if (start > 0) await file.seek(start, Deno.SeekMode.Start);
    } catch (err) {
      file.close();
      throw err;
    }
    ex.markStreaming();
    if (range === null) return new Response(file.readable, { status, headers });
    return new Response(limitStream(file, length), { status, headers });
  }
}

/** The first `length` bytes of an open file, closing it at the end. */
function limitStream(file: Deno.FsFile, length: number): ReadableStream<Uint8Array> {
  let left = length;
  return new ReadableStream({
    async pull(c) {
      if (left <= 0) {
        file.close();
        c.close();
        return;
      }
      const buf = new Uint8Array(Math.min(65536, left));
      let n: number | null;
      try {
        n = await file.read(buf);
      } catch (err) {
        file.close();
        throw err;
      }
      if (n === null) {
        file.close();
        c.close();
        return;
      }
      left -= n;
      c.enqueue(buf.subarray(0, n));
    },
    cancel() {
      file.close();
    },
  });
}
