/**
 * Turns a route's policy list (the application's, unless `inherit: false`, then the route's)
 * into compiled policies, once per generation. A policy object shared by several routes (the
 * application's) is compiled once, so its state (remembered credentials) is shared too.
 * Consecutive `allow`/`deny` entries become one rule list.
 */
import type { AddressPolicy, PolicyConfig } from "../../config/mod.ts";
import type { Clock } from "../../base/mod.ts";
import type { LimiterRegistry } from "../rate_limit.ts";
import { addressPolicy } from "./address_list.ts";
import { AUTH_FAILURES, BasicAuth, type Verify } from "./basic_auth.ts";
import { compressPolicy } from "./compress.ts";
import { corsPolicy } from "./cors.ts";
import { errorPagesPolicy } from "./error_pages.ts";
import { headersPolicy } from "./headers.ts";
import type { Policy } from "./policy.ts";
import { redirectPolicy } from "./redirect.ts";
import { rewritePolicy } from "./rewrite.ts";

export interface PolicyDeps {
  readonly clock: Clock;
  readonly limiters: LimiterRegistry;
  readonly verify?: Verify;
}

/** Compiles policies for one generation; `compile` may be called for every route. */
export class PolicyCompiler {
  private readonly cache = new Map<PolicyConfig, Policy>();
  constructor(private readonly deps: PolicyDeps) {}

  compile(list: readonly PolicyConfig[]): Policy[] {
    const out: Policy[] = [];
    for (let i = 0; i < list.length; i++) {
      const p = list[i];
      if (p.policy === "allow" || p.policy === "deny") {
        const run: AddressPolicy[] = [];
        while (i < list.length && (list[i].policy === "allow" || list[i].policy === "deny")) {
          run.push(list[i++] as AddressPolicy);
        }
        i--;
        out.push(addressPolicy(run));
        continue;
      }
      let c = this.cache.get(p);
      if (c === undefined) {
        c = this.one(p as Exclude<PolicyConfig, AddressPolicy>);
        this.cache.set(p, c);
      }
      out.push(c);
    }
    return out;
  }

  private one(p: Exclude<PolicyConfig, AddressPolicy>): Policy {
    switch (p.policy) {
      case "rewrite":
        return rewritePolicy(p);
      case "redirect":
        return redirectPolicy(p);
      case "headers":
        return headersPolicy(p);
      case "cors":
        return corsPolicy(p);
      case "basic_auth":
        return new BasicAuth(p, {
          clock: this.deps.clock,
          failures: this.deps.limiters.get(`basic_auth ${p.realm}`, AUTH_FAILURES),
          verify: this.deps.verify,
        });
      case "compress":
        return compressPolicy(p);
      case "error_pages":
        return errorPagesPolicy(p);
    }
  }
}
