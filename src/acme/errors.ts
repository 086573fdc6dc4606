/** The errors of the ACME client: a server's problem document, or an answer it cannot use. */

/** An ACME server refused a request with a problem document (RFC 8555 §6.7, RFC 7807). */
export class AcmeProblem extends Error {
  override readonly name = "AcmeProblem";
  constructor(
    /** `urn:ietf:params:acme:error:badNonce` and the like; "" when the server sent none. */
    readonly type: string,
    readonly detail: string,
    readonly status: number,
    readonly url: string,
    /** The answer's `Retry-After` (a rate limit says when to come back), or null. */
    readonly retryAfter: string | null = null,
  ) {
    super(`${url}: ${status} ${type || "problem"}${detail ? `: ${detail}` : ""}`);
  }

  /** The short type (`badNonce`) of an `urn:ietf:params:acme:error:` problem, else the type. */
  get short(): string {
    const p = "urn:ietf:params:acme:error:";
    return this.type.startsWith(p) ? this.type.slice(p.length) : this.type;
  }
}

/** An answer the client does not understand (bad JSON, a missing field, an unknown status). */
export class AcmeProtocolError extends Error {
  override readonly name = "AcmeProtocolError";
}
