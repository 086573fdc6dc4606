import type { RespondRuntime } from "../config/types.ts";
import { type Answer, FrontAnswer } from "../front/answer.ts";
import type { Exchange, Handler } from "../pipeline/exchange.ts";

/** Answers every request with the configured status, body and headers. */
export class RespondHandler implements Handler {
  private readonly body: Uint8Array<ArrayBuffer>;
  private readonly headers: Record<string, string>;
  /** The same headers as lower-case pairs, for scalwsd's own front (copied per answer). */
  private readonly pairs: [string, string][];
  private readonly noBody: boolean;
  constructor(readonly runtime: RespondRuntime) {
    this.body = new TextEncoder().encode(runtime.body);
    this.headers = { ...runtime.headers };
    if (
      this.body.length > 0 &&
      !Object.keys(this.headers).some((h) => h.toLowerCase() === "content-type")
    ) {
      this.headers["content-type"] = "text/plain; charset=utf-8";
    }
    this.pairs = Object.entries(this.headers).map(([k, v]) => [k.toLowerCase(), v]);
    const s = runtime.status;
    this.noBody = s === 204 || s === 304 || s < 200;
  }

  handle(ex: Exchange): Answer {
    const head = ex.req.method === "HEAD";
    ex.status = this.runtime.status;
    ex.bytes = head || this.noBody ? 0 : this.body.length;
    if (ex.rawAnswer) {
      // No Response and no stream: the front writes the bytes with their length (HEAD too,
      // without the body). The pairs are copied because a wrapper may set fields on them.
      return new FrontAnswer(
        this.runtime.status,
        this.pairs.slice(),
        this.noBody ? null : this.body,
      );
    }
    return new Response(head || this.noBody ? null : this.body, {
      status: this.runtime.status,
      headers: this.headers,
    });
  }
}
