/**
 * `compress`: gzip or brotli (node:zlib) of text-like answers, streamed chunk by chunk with
 * backpressure. Never for HEAD, 206 and other statuses without a full body, bodies already
 * encoded, `Cache-Control: no-transform`, other media types, or bodies known to be under
 * `min_size`. `Vary: Accept-Encoding` goes on every answer of a compressible type; a strong
 * `ETag` becomes weak, as nginx does.
 */
import zlib from "node:zlib";
import type { CompressPolicy } from "../../config/mod.ts";
import type { Exchange } from "../exchange.ts";
import { requestHeader, requestMethod } from "../request_view.ts";
import { negotiate } from "./accept_encoding.ts";
import { addVary } from "./cors.ts";
import type { Policy } from "./policy.ts";

/** A media-type matcher of `types` (`text/*` allowed). */
export function typeMatcher(types: readonly string[]): (contentType: string) => boolean {
  const exact = new Set(types.filter((t) => !t.endsWith("/*")));
  const prefixes = types.filter((t) => t.endsWith("/*")).map((t) => t.slice(0, -1));
  return (ct) => {
    const semi = ct.indexOf(";");
    const t = (semi < 0 ? ct : ct.slice(0, semi)).trim().toLowerCase();
    return exact.has(t) || prefixes.some((p) => t.startsWith(p));
  };
}

/** A compressing transform of `coding` at the policy's level. */
export function compressor(coding: string, cfg: CompressPolicy): zlib.Gzip | zlib.BrotliCompress {
  if (coding === "gzip") return zlib.createGzip({ level: cfg.level });
  return zlib.createBrotliCompress({
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: cfg.brotli_level },
  });
}

/**
 * Pipes `src` through `z`. Each pull feeds zlib one chunk at a time (waiting until zlib took
 * it: backpressure) until zlib has produced output, since gzip keeps small inputs back and a
 * pull that enqueues nothing is not called again. `onEnd` is told once: with the bytes produced
 * when the stream ends or fails, with null when it is cancelled (by the client, or by a policy
 * that replaced the body).
 */
export function compressStream(
  src: ReadableStream<Uint8Array>,
  z: zlib.Gzip | zlib.BrotliCompress,
  onEnd?: (bytes: number | null) => void,
): ReadableStream<Uint8Array> {
  const reader = src.getReader();
  let ended = false;
  let produced = 0;
  let bytes = 0;
  let told = false;
  const tell = (cancelled = false) => {
    if (told) return;
    told = true;
    onEnd?.(cancelled ? null : bytes);
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      z.on("data", (c: Uint8Array) => {
        produced++;
        bytes += c.byteLength;
        controller.enqueue(new Uint8Array(c.buffer, c.byteOffset, c.byteLength));
      });
      z.on("end", () => {
        tell();
        controller.close();
      });
      z.on("error", (e: Error) => {
        tell();
        controller.error(e);
      });
    },
    async pull() {
      const before = produced;
      try {
        while (!ended && produced === before) {
          const { done, value } = await reader.read();
          if (done) {
            ended = true;
            z.end();
            return;
          }
          await new Promise<void>((resolve, reject) =>
            z.write(value, (e) => (e ? reject(e) : resolve()))
          );
        }
      } catch (err) {
        // The source failed (a member cut off): the body ends here.
        tell();
        throw err;
      }
    },
    cancel(reason) {
      ended = true;
      tell(true);
      z.destroy();
      return reader.cancel(reason);
    },
  }, { highWaterMark: 1 });
}

/** Statuses whose body may be compressed. */
function compressible(status: number): boolean {
  return status >= 200 && status !== 204 && status !== 206 && status !== 304;
}

export function compressPolicy(cfg: CompressPolicy): Policy {
  const typeOk = typeMatcher(cfg.types);
  const codings = cfg.encodings;
  return {
    name: "compress",
    response(ex: Exchange, res: Response) {
      const h = res.headers;
      const ct = h.get("content-type");
      if (ct === null || !typeOk(ct) || !compressible(res.status)) return res;
      if (h.has("content-encoding")) return res;
      const cc = h.get("cache-control");
      if (cc !== null && /(^|,)\s*no-transform\s*(,|$)/i.test(cc)) return res;
      addVary(h, "Accept-Encoding");
      if (requestMethod(ex) === "HEAD" || res.body === null) return res;
      const cl = h.get("content-length");
      const known = cl !== null ? Number(cl) : !ex.deferred && !ex.streaming ? ex.bytes : -1;
      if (known >= 0 && known < cfg.min_size) return res;
      const coding = negotiate(requestHeader(ex, "accept-encoding"), codings);
      if (coding === null) return res;
      const headers = new Headers(h);
      headers.delete("content-length");
      headers.set("content-encoding", coding);
      const etag = headers.get("etag");
      if (etag !== null && !etag.startsWith("W/")) headers.set("etag", `W/${etag}`);
      // The access log counts the compressed bytes: the exchange completes at their end.
      ex.holdCompletion();
      const body = compressStream(
        res.body,
        compressor(coding, cfg),
        (n) => ex.releaseCompletion(n),
      );
      return new Response(body, {
        status: res.status,
        statusText: res.statusText,
        headers,
      });
    },
  };
}
