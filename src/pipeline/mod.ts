/**
 * The request pipeline between a front and a handler: the `Session` both fronts implement
 * (`session.ts`) and the `Exchange` of one request (`exchange.ts`); the client's address behind
 * trusted proxies, hosts, paths, routes (`router.ts` by prefix, `route_table.ts` with
 * conditions), rate limits (local or shared in Redis), request ids, the request body whichever
 * front read it, and the route policies (`policies/`: one file per policy, compiled once, run as
 * a chain). It does not proxy or serve files (`handlers/`).
 *
 * @module
 */

export { answerBytes } from "./answer_bytes.ts";
export { clientAddress } from "./client_ip.ts";
export {
  AppStats,
  type ClientRequest,
  Exchange,
  type FrontUpgrade,
  type Handler,
  type RequestFields,
} from "./exchange.ts";
export { hostName, HostTable } from "./hosts.ts";
export { ListedRoutes } from "./listed_routes.ts";
export { LimitsStore, type LimitsStoreState } from "./limits_store.ts";
export { NotAllowedHandler } from "./not_allowed.ts";
export { normalizePath } from "./path.ts";
export { PolicyCompiler } from "./policies/compile.ts";
export { type Policy, PolicyHandler } from "./policies/policy.ts";
export { redirectPolicy } from "./policies/redirect.ts";
export { LimiterRegistry, RateLimiter } from "./rate_limit.ts";
export { requestBody } from "./request_body.ts";
export { requestIdHeader, requestIdHeaderLower, setRequestIdHeader } from "./request_id.ts";
export { RouteTable } from "./route_table.ts";
export { Router } from "./router.ts";
export {
  type Ending,
  IN_THE_CLEAR,
  type Protocol,
  type Session,
  type TlsLogFields,
} from "./session.ts";
export { compileTrusted } from "./trusted_proxies.ts";
export { pathStart, urlAuthority } from "./url.ts";
