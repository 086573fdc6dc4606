/** The `405 Method Not Allowed` answer of a route path whose routes do not take the method. */
import type { Exchange, Handler } from "./exchange.ts";
import { answer } from "./policies/policy.ts";

export class NotAllowedHandler implements Handler {
  private readonly extra: Record<string, string>;
  constructor(readonly allow: readonly string[]) {
    this.extra = { allow: allow.join(", ") };
  }

  handle(ex: Exchange): Response {
    return answer(ex, 405, "Method Not Allowed", this.extra);
  }
}
