/**
 * Route policies around a handler. A policy may act on the request before the handler (and
 * answer it itself: a redirect, a preflight, a 401) and on the answer after it. Policies run
 * in list order on the way in and in reverse order on the way out; an answer made by a policy
 * passes back only through the policies before it, as middleware does in Caddy and Traefik.
 * Routes without policies get their handler as it is: nothing on their path changes.
 */
import type { Answer } from "../../front/mod.ts";
import type { Exchange, Handler } from "../exchange.ts";

/** One compiled policy; both phases are optional. */
export interface Policy {
  /** For messages and tests: the policy's name as configured. */
  readonly name: string;
  /** Null: go on; a response: the answer (later policies and the handler are skipped). */
  request?(ex: Exchange): Response | null | Promise<Response | null>;
  /** The answer on its way out; may return another response. */
  response?(ex: Exchange, res: Response): Response;
}

const TEXT = "text/plain; charset=utf-8";

/** A short plain-text answer made by a policy; sets the exchange's status. */
export function answer(
  ex: Exchange,
  status: number,
  text: string,
  extra?: Record<string, string>,
): Response {
  ex.answered(status, ex.req.method === "HEAD" ? 0 : text.length + 1);
  const headers: Record<string, string> = { "content-type": TEXT };
  if (extra !== undefined) { for (const k in extra) headers[k] = extra[k]; }
  return new Response(ex.req.method === "HEAD" ? null : text + "\n", { status, headers });
}

/** A handler behind a list of policies; built once per route at load. */
export class PolicyHandler implements Handler {
  private readonly outward: readonly Policy[];
  /**
   * No policy acts on the answer (a route with only `rewrite`, say): the handler's answer passes
   * as it was made, no `Response` built for it on scalwsd's own front.
   */
  private readonly inwardOnly: boolean;
  constructor(readonly policies: readonly Policy[], readonly inner: Handler) {
    this.outward = policies;
    this.inwardOnly = policies.every((p) => p.response === undefined);
  }

  handle(ex: Exchange): Answer | Promise<Answer> {
    return this.from(ex, 0);
  }

  /** Runs request phases from `start`, then the handler, then the way out. */
  private from(ex: Exchange, start: number): Answer | Promise<Answer> {
    const ps = this.policies;
    for (let i = start; i < ps.length; i++) {
      const req = ps[i].request;
      if (req === undefined) continue;
      const r = req.call(ps[i], ex);
      if (r === null) continue;
      if (r instanceof Promise) return this.resume(ex, r, i);
      return this.out(ex, r, i - 1);
    }
    if (this.inwardOnly) return this.inner.handle(ex);
    // The way out reads and edits a `Response`: the handler gives one.
    ex.answerAsResponse();
    const res = this.inner.handle(ex) as Response | Promise<Response>;
    if (res instanceof Promise) return this.after(ex, res);
    return this.out(ex, res, ps.length - 1);
  }

  private async resume(
    ex: Exchange,
    pending: Promise<Response | null>,
    i: number,
  ): Promise<Answer> {
    const r = await pending;
    if (r !== null) return this.out(ex, r, i - 1);
    return await this.from(ex, i + 1);
  }

  private async after(ex: Exchange, pending: Promise<Response>): Promise<Response> {
    return this.out(ex, await pending, this.policies.length - 1);
  }

  /** The way out: response phases from `last` down to the first policy. */
  private out(ex: Exchange, res: Response, last: number): Response {
    const ps = this.outward;
    for (let i = last; i >= 0; i--) {
      const f = ps[i].response;
      if (f !== undefined) res = f.call(ps[i], ex, res);
    }
    if (ex.status !== res.status && !ex.deferred) ex.answered(res.status);
    return res;
  }

  close(): void {
    this.inner.close?.();
  }
}
