import type { RespondRuntime } from "../config/types.ts";
import type { Exchange, Handler } from "../pipeline/exchange.ts";

/** Answers every request with the configured status, body and headers. */
export class RespondHandler implements Handler {
  private readonly body: Uint8Array<ArrayBuffer>;
  private readonly headers: Record<string, string>;
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
    const s = runtime.status;
    this.noBody = s === 204 || s === 304 || s < 200;
  }

  handle(ex: Exchange): Response {
    const head = ex.req.method === "HEAD";
    ex.status = this.runtime.status;
    ex.bytes = head || this.noBody ? 0 : this.body.length;
    return new Response(head || this.noBody ? null : this.body, {
      status: this.runtime.status,
      headers: this.headers,
    });
  }
}
