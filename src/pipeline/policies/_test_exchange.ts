/** Exchanges for the policies' unit tests: no socket, no log. */
import { AccessLog } from "../../observe/access_log.ts";
import { createMetrics } from "../../observe/families.ts";
import { Registry } from "../../observe/metrics.ts";
import { AppStats, Exchange, type Handler } from "../exchange.ts";

const stats = new AppStats("t", "a", createMetrics(new Registry()));
const log = new AccessLog("off");

/** An exchange for `GET http://site.test{target}` from `client`, with `headers`. */
export function testExchange(
  target: string,
  opts: { method?: string; headers?: Record<string, string>; client?: string } = {},
): Exchange {
  const q = target.indexOf("?");
  return new Exchange({
    req: new Request(`http://site.test${target}`, {
      method: opts.method ?? "GET",
      headers: opts.headers,
    }),
    path: q < 0 ? target : target.slice(0, q),
    query: q < 0 ? "" : target.slice(q),
    authority: "site.test",
    peer: "127.0.0.1",
    peerTrusted: false,
    client: opts.client ?? "127.0.0.1",
    secure: false,
    stats,
    start: 0,
    log,
  });
}

/** A handler answering `body` and recording the path it saw. */
export function recorder(body = "ok", headers: Record<string, string> = {}) {
  const seen: string[] = [];
  const handler: Handler = {
    handle(ex) {
      seen.push(ex.path);
      ex.status = 200;
      return new Response(body, { headers });
    },
  };
  return { handler, seen };
}
