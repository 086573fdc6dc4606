/**
 * The bridge between one connection of scalwsd's own HTTP/1.1 front and the dispatcher: the
 * front's handler for that connection, which knows its `ClientConn` (peer, TLS state, the
 * `limit_conn` verdict).
 */

import { plain } from "../base/plain.ts";
import type { Answer } from "../front/answer.ts";
import type { FrontConnection, FrontHandler } from "../front/connection.ts";
import type { FrontRequest } from "../front/front_request.ts";
import { log } from "../observe/log.ts";
import type { ClientConn } from "./client_conn.ts";
import type { Dispatcher } from "./dispatcher.ts";
import type { Policy } from "../pipeline/policies/policy.ts";
import { hostName } from "../pipeline/hosts.ts";

const OVER_LIMIT = { "retry-after": "1", connection: "close" };

export class FrontServe implements FrontHandler {
  constructor(
    private readonly d: Dispatcher,
    private readonly c: ClientConn,
    /** The listener: its `redirect` policy (null: it routes), read per request (reloads). */
    private readonly listener: { readonly redirect: Policy | null },
  ) {}

  get draining(): boolean {
    return this.d.draining;
  }

  serve(req: FrontRequest, front: FrontConnection): Answer | Promise<Answer> {
    // Over `limit_conn`: the request is refused and the connection closes after the answer.
    if (this.c.overLimit) {
      return plain(429, "Too Many Requests: too many connections from this address", OVER_LIMIT);
    }
    // HTTP-01 validation of a `tls.acme` domain, on plain listeners only, before any
    // redirect or routing; one flag read when no listener has `tls.acme`.
    const challenges = this.d.challenges;
    if (challenges !== null && challenges.active && this.c.tls === null) {
      const host = hostName(req.authority);
      const answer = challenges.answer(host, req.target);
      if (answer === null && challenges.sharedDir !== null) {
        // Another instance may be ordering: its tokens are in the shared state directory.
        return challenges.shared(host, req.target).then((a) =>
          this.d.challenge(req, this.c, host, a)
        );
      }
      if (answer !== undefined) return this.d.challenge(req, this.c, host, answer);
    }
    const redirect = this.listener.redirect;
    if (redirect !== null) return this.d.redirectFront(req, this.c, redirect);
    return this.d.handleFront(req, this.c, front);
  }

  failed(err: unknown): Answer {
    log("error", "request_failed", { error: String(err) });
    return plain(500, "Internal Server Error");
  }
}
