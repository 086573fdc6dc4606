import type { StaticRuntime } from "../config/types.ts";
import type { Exchange, Handler } from "../pipeline/exchange.ts";
import { plain } from "../server/plain.ts";
import { contentType } from "./mime.ts";

/** A byte range resolved against the file size, or null for "whole file". */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/**
 * Parses a single `Range: bytes=...` header. Returns null when the header should be ignored
 * (absent, several ranges, another unit), "unsatisfiable" when no byte of the range exists.
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
    if (suffix === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return "unsatisfiable";
  return { start, end };
}

function etagOf(info: Deno.FileInfo): string {
  const mtime = info.mtime?.getTime() ?? 0;
  return `"${info.size.toString(16)}-${mtime.toString(16)}"`;
}

function etagMatches(header: string, etag: string): boolean {
  if (header.trim() === "*") return true;
  for (const part of header.split(",")) {
    const t = part.trim();
    if (t === etag || t === `W/${etag}`) return true;
  }
  return false;
}

/**
 * Serves files under `root`: GET and HEAD, ETag and Last-Modified with conditional requests,
 * single byte ranges, a directory index, and no path (symlinks included) that leaves the root.
 */
export class StaticHandler implements Handler {
  private rootReal: string | null = null;

  constructor(readonly runtime: StaticRuntime) {}

  private async root(): Promise<string> {
    this.rootReal ??= await Deno.realPath(this.runtime.root);
    return this.rootReal;
  }

  async handle(ex: Exchange): Promise<Response> {
    const method = ex.req.method;
    if (method !== "GET" && method !== "HEAD") {
      ex.status = 405;
      return plain(405, "Method Not Allowed", { allow: "GET, HEAD" });
    }
    let rel: string;
    try {
      rel = decodeURIComponent(ex.path);
    } catch {
      ex.status = 400;
      return plain(400, "Bad Request: invalid path encoding");
    }
    if (rel.includes("\0") || rel.split("/").some((s) => s === "..")) {
      ex.status = 404;
      return plain(404, "Not Found");
    }
    let root: string;
    try {
      root = await this.root();
    } catch {
      ex.status = 404;
      return plain(404, "Not Found");
    }
    let real: string;
    let info: Deno.FileInfo;
    try {
      real = await Deno.realPath(root + rel);
      if (real !== root && !real.startsWith(root + "/")) {
        ex.status = 404;
        return plain(404, "Not Found");
      }
      info = await Deno.stat(real);
      if (info.isDirectory) {
        if (!ex.path.endsWith("/")) {
          ex.status = 301;
          return new Response(null, {
            status: 301,
            headers: { location: ex.path + "/" + ex.query },
          });
        }
        real = await Deno.realPath(`${real}/${this.runtime.index}`);
        if (!real.startsWith(root + "/")) {
          ex.status = 404;
          return plain(404, "Not Found");
        }
        info = await Deno.stat(real);
      }
      if (!info.isFile) {
        ex.status = 403;
        return plain(403, "Forbidden");
      }
    } catch (err) {
      const status = err instanceof Deno.errors.PermissionDenied ? 403 : 404;
      ex.status = status;
      return plain(status, status === 403 ? "Forbidden" : "Not Found");
    }
    const h = ex.req.headers;
    const etag = etagOf(info);
    const lastModified = (info.mtime ?? new Date(0)).toUTCString();
    const headers: Record<string, string> = {
      "content-type": contentType(real),
      etag,
      "last-modified": lastModified,
      "accept-ranges": "bytes",
    };
    const inm = h.get("if-none-match");
    const ims = h.get("if-modified-since");
    if (
      (inm !== null && etagMatches(inm, etag)) ||
      (inm === null && ims !== null && info.mtime !== null &&
        Math.floor(info.mtime.getTime() / 1000) <= Math.floor(Date.parse(ims) / 1000))
    ) {
      ex.status = 304;
      return new Response(null, { status: 304, headers: { etag, "last-modified": lastModified } });
    }
    let range = parseRange(h.get("range"), info.size);
    const ifRange = h.get("if-range");
    if (range !== null && ifRange !== null && ifRange !== etag && ifRange !== lastModified) {
      range = null;
    }
    if (range === "unsatisfiable") {
      ex.status = 416;
      return new Response(null, {
        status: 416,
        headers: { "content-range": `bytes */${info.size}` },
      });
    }
    const start = range === null ? 0 : range.start;
    const length = range === null ? info.size : range.end - range.start + 1;
    if (range !== null) headers["content-range"] = `bytes ${range.start}-${range.end}/${info.size}`;
    const status = range === null ? 200 : 206;
    ex.status = status;
    if (method === "HEAD") {
      headers["content-length"] = String(length);
      return new Response(null, { status, headers });
    }
    ex.bytes = length;
    const file = await Deno.open(real, { read: true });
    if (start > 0) await file.seek(start, Deno.SeekMode.Start);
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
      const n = await file.read(buf);
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
