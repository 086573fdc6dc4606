/**
 * The answers the response cache handles, whichever front made them: a `Response` (HTTP/2,
 * Deno.serve) or a `FrontAnswer` (scalwsd's own front). Reading their fields, setting one,
 * swapping the body, reading a body whole up to a cap, and dropping one nobody will read.
 */
import type { Bytes } from "../cache/mod.ts";
import { type Answer, FrontAnswer, type PullBody, pullStream } from "../front/mod.ts";
import type { Exchange, RequestFields } from "../pipeline/mod.ts";

export const EMPTY: Bytes = new Uint8Array(0);

/** The header pairs of a `FrontAnswer` read like `Headers` (lower-case names). */
class PairFields implements RequestFields {
  constructor(private readonly pairs: readonly [string, string][]) {}

  get(name: string): string | null {
    let v: string | null = null;
    for (const p of this.pairs) {
      if (p[0] === name) v = v === null ? p[1] : v + ", " + p[1];
    }
    return v;
  }

  has(name: string): boolean {
    return this.get(name) !== null;
  }

  forEach(fn: (value: string, name: string) => void): void {
    for (const p of this.pairs) fn(p[1], p[0]);
  }
}

/** The header fields of an answer, whichever kind. */
export function fieldsOf(a: Answer): RequestFields {
  return a instanceof Response ? a.headers : new PairFields(a.headers);
}

/** Sets `name` (lower-case) on an answer, replacing what it had. */
export function setField(a: Answer, name: string, value: string): void {
  if (a instanceof Response) {
    a.headers.set(name, value);
    return;
  }
  const h = a.headers;
  for (let i = h.length - 1; i >= 0; i--) if (h[i][0] === name) h.splice(i, 1);
  h.push([name, value]);
}

/** A streamed body as a stream (a member's body pulled from its connection is made one). */
export function streamOf(body: ReadableStream<Uint8Array> | PullBody): ReadableStream<Uint8Array> {
  return body instanceof ReadableStream ? body : pullStream(body);
}

/** An answer like `a` (same kind, status and header fields) with another body. */
export function withBody(a: Answer, body: ReadableStream<Uint8Array> | Bytes | null): Answer {
  if (a instanceof Response) return new Response(body, { status: a.status, headers: a.headers });
  return new FrontAnswer(a.status, a.headers, body, a.onWritten);
}

/** A body nobody will read: released without counting against the member. */
export function discard(ex: Exchange, res: Answer): void {
  // The attempt would complete the exchange when its body ends; the cache answers instead.
  ex.cancelDeferral();
  const body = res.body;
  if (body instanceof ReadableStream) body.cancel().catch(() => {});
  else if (body !== null && !(body instanceof Uint8Array)) body.cancel();
  if (res instanceof FrontAnswer) res.onWritten?.(false);
}

/** The whole body when it is at most `max` bytes; null when larger or broken. */
export async function readCapped(res: Answer, max: number): Promise<Bytes | null> {
  const body = res.body;
  if (body === null) return EMPTY;
  if (body instanceof Uint8Array) return body.length > max ? null : body.slice() as Bytes;
  const reader = streamOf(body).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      size += r.value.length;
      if (size > max) {
        await reader.cancel();
        return null;
      }
      chunks.push(r.value);
    }
  } catch {
    return null;
  }
  return join(chunks, size);
}

export function join(chunks: readonly Uint8Array[], size: number): Bytes {
  if (chunks.length === 1 && chunks[0].byteOffset === 0) {
    return chunks[0].slice() as Bytes;
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
