/**
 * `cors`: answers preflights (`OPTIONS` with `Origin` and `Access-Control-Request-Method`)
 * itself with 204, and adds `Access-Control-*` to other answers for allowed origins. Every
 * answer through it gets `Vary: Origin`. A disallowed origin, method or header gets no CORS
 * headers, so the browser refuses the response. `*` is answered as `*`; with `credentials` the
 * origin is echoed (and `*` is refused at load).
 */
import type { CorsPolicy } from "../../config/mod.ts";
import type { Exchange } from "../exchange.ts";
import { requestHeader, requestMethod } from "../request_view.ts";
import type { Policy } from "./policy.ts";

/** Request headers a browser may send without asking (the CORS-safelisted ones). */
const SAFELISTED = new Set(["accept", "accept-language", "content-language", "content-type"]);

/** A compiled origin list. */
export class OriginMatcher {
  readonly any: boolean;
  private readonly exact: Set<string>;
  /** `[scheme://, .suffix, :port or ""]` of `scheme://*.suffix[:port]`. */
  private readonly wild: (readonly [string, string, string])[];

  constructor(origins: readonly string[]) {
    this.any = origins.includes("*");
    this.exact = new Set(origins.filter((o) => o !== "*" && !o.includes("://*.")));
    this.wild = origins.filter((o) => o.includes("://*.")).map((o) => {
      const [scheme, rest] = o.split("://*.");
      const colon = rest.indexOf(":");
      return [
        scheme + "://",
        "." + (colon < 0 ? rest : rest.slice(0, colon)),
        colon < 0 ? "" : rest.slice(colon),
      ] as const;
    });
  }

  /** Whether `origin` (as the browser sent it) is allowed. */
  allows(origin: string): boolean {
    if (this.any) return true;
    const o = origin.toLowerCase();
    if (this.exact.has(o)) return true;
    for (const [scheme, suffix, port] of this.wild) {
      if (!o.startsWith(scheme)) continue;
      let host = o.slice(scheme.length);
      if (port !== "") {
        if (!host.endsWith(port)) continue;
        host = host.slice(0, -port.length);
      } else if (host.includes(":")) continue;
      if (host.length > suffix.length && host.endsWith(suffix) && !host.includes("/")) return true;
    }
    return false;
  }
}

function addVary(h: Headers, value: string): void {
  const v = h.get("vary");
  if (v === null) h.set("vary", value);
  else if (v !== "*" && !v.toLowerCase().split(",").some((p) => p.trim() === value.toLowerCase())) {
    h.set("vary", `${v}, ${value}`);
  }
}

export function corsPolicy(cfg: CorsPolicy): Policy {
  const origins = new OriginMatcher(cfg.origins);
  const star = origins.any && !cfg.credentials;
  const methods = cfg.methods.join(", ");
  const allowedHeaders = new Set(cfg.headers);
  const expose = cfg.expose_headers.join(", ");
  const maxAge = cfg.max_age === undefined ? null : String(cfg.max_age);

  return {
    name: "cors",
    request(ex: Exchange) {
      if (requestMethod(ex) !== "OPTIONS") return null;
      const origin = requestHeader(ex, "origin");
      const want = requestHeader(ex, "access-control-request-method");
      if (origin === null || want === null) return null;
      const headers: Record<string, string> = { vary: "Origin" };
      ex.answered(204, 0);
      if (!origins.allows(origin) || !cfg.methods.includes(want)) {
        return new Response(null, { status: 204, headers });
      }
      const asked = requestHeader(ex, "access-control-request-headers");
      let allowHeaders = "";
      if (asked !== null && asked.trim() !== "") {
        const list = asked.split(",").map((s) => s.trim().toLowerCase()).filter((s) => s !== "");
        for (const name of list) {
          if (!allowedHeaders.has(name) && !SAFELISTED.has(name)) {
            return new Response(null, { status: 204, headers });
          }
        }
        allowHeaders = list.join(", ");
      }
      headers["access-control-allow-origin"] = star ? "*" : origin;
      headers["access-control-allow-methods"] = methods;
      if (allowHeaders !== "") headers["access-control-allow-headers"] = allowHeaders;
      if (cfg.credentials) headers["access-control-allow-credentials"] = "true";
      if (maxAge !== null) headers["access-control-max-age"] = maxAge;
      return new Response(null, { status: 204, headers });
    },
    response(ex: Exchange, res: Response) {
      const h = res.headers;
      addVary(h, "Origin");
      const origin = requestHeader(ex, "origin");
      if (origin === null || !origins.allows(origin)) return res;
      h.set("access-control-allow-origin", star ? "*" : origin);
      if (cfg.credentials) h.set("access-control-allow-credentials", "true");
      if (expose !== "") h.set("access-control-expose-headers", expose);
      return res;
    },
  };
}

export { addVary };
