import { AccessLog } from "../observe/access_log.ts";
import { createMetrics } from "../observe/families.ts";
import { Registry } from "../observe/metrics.ts";
import { AppStats, type ClientRequest, Exchange } from "./exchange.ts";

const stats = new AppStats("t", "a", createMetrics(new Registry()));
const OFF = new AccessLog("off");

/**
 * An exchange for unit tests, as a front makes it for `GET http://a.test/x` from 127.0.0.1:
 * `raw` says scalwsd's own front served it (FrontAnswers allowed); `req` replaces the request.
 */
export function exchangeForTest(
  o: {
    raw?: boolean;
    method?: string;
    headers?: Record<string, string>;
    req?: ClientRequest;
  } = {},
): Exchange {
  const ex = new Exchange({
    req: o.req ??
      {
        method: o.method ?? "GET",
        url: "http://a.test/x",
        headers: new Headers(o.headers ?? {}),
        body: null,
      },
    path: "/x",
    query: "",
    authority: "a.test",
    peer: "127.0.0.1",
    peerTrusted: false,
    client: "127.0.0.1",
    secure: false,
    stats,
    start: performance.now(),
    log: OFF,
  });
  ex.rawAnswer = o.raw ?? false;
  return ex;
}
