/**
 * `runtime: {type: respond}`: a fixed answer (status, body, headers) made once at load and
 * answered per request without reading anything, in the form of the front that serves it
 * (on scalwsd's own front the bytes and pairs as they are).
 *
 * @module
 */

import type { RespondRuntime } from "../config/mod.ts";
import type { Answer } from "../front/mod.ts";
import type { Exchange, Handler } from "../pipeline/mod.ts";

/** Answers every request with the configured status, body and headers. */
export class RespondHandler implements Handler {
  private readonly body: Uint8Array<ArrayBuffer>;
  /** The headers as lower-case pairs (copied per answer). */
  private readonly pairs: [string, string][];
  private readonly noBody: boolean;
  constructor(readonly runtime: RespondRuntime) {
    this.body = new TextEncoder().encode(runtime.body);
    const headers = { ...runtime.headers };
    if (
      this.body.length > 0 &&
      !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")
    ) {
      headers["content-type"] = "text/plain; charset=utf-8";
    }
    this.pairs = Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]);
    const s = runtime.status;
    this.noBody = s === 204 || s === 304 || s < 200;
  }

  handle(ex: Exchange): Answer {
    const head = ex.req.method === "HEAD";
    ex.answered(this.runtime.status, head || this.noBody ? 0 : this.body.length);
    // The bytes with their length (a HEAD without them). The pairs are copied because a
    // wrapper may set fields on them.
    return ex.answer(this.runtime.status, this.pairs.slice(), this.noBody ? null : this.body);
  }
}
