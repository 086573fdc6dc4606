/**
 * The metrics listener's handler: `/metrics` (the Prometheus text), `/readyz` and `/livez`, and
 * nothing of the admin API.
 *
 * @module
 */

import { EXPOSITION_CONTENT_TYPE } from "../src/observe/mod.ts";
import type { AdminTarget } from "./target.ts";

/**
 * The unauthenticated metrics listener: `/metrics`, `/readyz` and `/livez`, nothing else (never
 * `/v1/...` or the console).
 */
export function metricsHandler(server: AdminTarget): (req: Request) => Response {
  return function serveMetrics(req: Request): Response {
    if (req.method !== "GET" && req.method !== "HEAD") {
      return new Response("Method Not Allowed\n", { status: 405, headers: { allow: "GET, HEAD" } });
    }
    const path = new URL(req.url).pathname;
    switch (path) {
      case "/metrics":
        return new Response(server.metrics.registry.render(), {
          headers: { "content-type": EXPOSITION_CONTENT_TYPE },
        });
      case "/readyz":
        return readyz(server);
      case "/livez":
        return Response.json({ status: "ok" });
      default:
        return Response.json({ error: "not found" }, { status: 404 });
    }
  };
}

/**
 * The metrics listener of an instance still preparing its generation (ADR-0035's Warming):
 * `/readyz` answers `{"generation": N, "state": "warming"}` with 503, `/livez` answers, and
 * `/metrics` is 503 until the server exists.
 */
export function warmingHandler(generation: number): (req: Request) => Response {
  return function serveWarming(req: Request): Response {
    if (req.method !== "GET" && req.method !== "HEAD") {
      return new Response("Method Not Allowed\n", { status: 405, headers: { allow: "GET, HEAD" } });
    }
    switch (new URL(req.url).pathname) {
      case "/readyz":
        return Response.json({ generation, state: "warming" }, { status: 503 });
      case "/livez":
        return Response.json({ status: "ok" });
      case "/metrics":
        return Response.json({ error: "warming: no metrics yet" }, { status: 503 });
      default:
        return Response.json({ error: "not found" }, { status: 404 });
    }
  };
}

/**
 * `{"generation": N, "state": "..."}`; 200 once ready, 503 before and while draining. A process
 * on its own (`listener_mode: shared`) answers `ready` while it serves; `active` is the
 * controller's state of an instance that joined the `SO_REUSEPORT` group (ADR-0035).
 */
export function readyz(server: AdminTarget): Response {
  const ok = server.state === "ready" || server.state === "active";
  const state = server.state === "active" && server.config.server.listener_mode === "shared"
    ? "ready"
    : server.state;
  return Response.json({ generation: server.generation.id, state }, { status: ok ? 200 : 503 });
}
