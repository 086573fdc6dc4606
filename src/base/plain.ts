/**
 * scalwsd's own short plain-text answers (`plain`: errors, an empty pool's 503) and the body sizes
 * of answers it made itself, which the access log's `bytes` reads. No HTML, no templates.
 *
 * @module
 */

const TEXT = { "content-type": "text/plain; charset=utf-8" };

const enc = new TextEncoder();
/** Body sizes of the answers scalwsd made itself: the access log's `bytes` reads them. */
const sizes = new WeakMap<Response, number>();

/** A short plain-text answer from scalwsd itself (errors, 503 of an empty pool, ...). */
export function plain(status: number, text: string, extra?: Record<string, string>): Response {
  return sized(
    new Response(text + "\n", { status, headers: extra ? { ...TEXT, ...extra } : TEXT }),
    text + "\n",
  );
}

/** Records `res`'s body (`body`, its text or its bytes) for `sizeOf`; returns `res`. */
export function sized(res: Response, body: string | Uint8Array | null): Response {
  sizes.set(res, body === null ? 0 : typeof body === "string" ? byteLength(body) : body.length);
  return res;
}

/** The body size recorded by `plain` or `sized`, or -1. */
export function sizeOf(res: Response): number {
  return sizes.get(res) ?? -1;
}

function byteLength(s: string): number {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return enc.encode(s).length;
  return s.length;
}
