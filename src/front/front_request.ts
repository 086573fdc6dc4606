/**
 * One request as the front hands it to scalwsd's pipeline: the parsed head (which also serves
 * as the headers: `get`, `has`, `forEach`) and the body, made into a stream only when a
 * handler asks for it. No `Request`, no `Headers`.
 */

import type { RequestBody } from "./read_request_body.ts";
import { RequestHead } from "./parse_request_head.ts";

export class FrontRequest {
  constructor(
    readonly head: RequestHead,
    /** Null when the request has no body. */
    readonly input: RequestBody | null,
    readonly secure: boolean,
  ) {}

  get method(): string {
    return this.head.method;
  }

  /** The field lines, read like `Request.headers`. */
  get headers(): RequestHead {
    return this.head;
  }

  /** The authority: an absolute-form target's, else the Host field's ("" when none). */
  get authority(): string {
    return this.head.targetAuthority || (this.head.host ?? "");
  }

  /** Path and query as received. */
  get target(): string {
    return this.head.target;
  }

  /** The request's absolute URL (built on demand; the pipeline reads `target`). */
  get url(): string {
    return (this.secure ? "https://" : "http://") + (this.authority || "localhost") +
      (this.head.target === "*" ? "/" : this.head.target);
  }

  /** The body stream, or null when the request has none. */
  get body(): ReadableStream<Uint8Array> | null {
    return this.input === null ? null : this.input.stream();
  }
}

/** A request of nothing (empty head, no body): what a session holds between requests. */
export const NO_REQUEST: FrontRequest = new FrontRequest(new RequestHead(), null, false);
