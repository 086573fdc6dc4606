/**
 * What answers a routed request: the proxy (one attempt loop, `proxy_loop.ts`, for a route's
 * `address`, `pool` and `backends` forms), `type: php` (script resolution, CGI params, FastCGI),
 * static files, fixed answers (`respond.ts`), WebSocket tunnels, and `cached.ts`, the response
 * cache wrapped around a route's handler. Each is built once per generation and called per
 * request with the `Exchange`; none routes.
 *
 * @module
 */

export { CachedHandler } from "./cached.ts";
export { routesShareUrls, routeTag } from "./cache_route.ts";
export { PhpHandler } from "./php.ts";
export { AddressProxyHandler } from "./proxy_address.ts";
export { BackendsHandler } from "./proxy_backends.ts";
export { PoolProxyHandler } from "./proxy_pool.ts";
export { RespondHandler } from "./respond.ts";
export { StaticHandler } from "./static.ts";
