/**
 * Exchanges for unit tests: no socket, no log. One factory for the pipeline's, the handlers' and
 * the cache's tests, with a session that stands for either front (`raw`: scalwsd's own HTTP/1.1
 * front, whose answers are `FrontAnswer`s; else Deno.serve's `Response`s).
 *
 * @module
 */
import { type Answer, type AnswerForm, FRONT_FORM, WEB_FORM } from "../../src/front/answer.ts";
import { AccessLog } from "../../src/observe/access_log.ts";
import { createMetrics } from "../../src/observe/families.ts";
import { Registry } from "../../src/observe/metrics.ts";
import {
  AppStats,
  type ClientRequest,
  Exchange,
  type Handler,
} from "../../src/pipeline/exchange.ts";
import { IN_THE_CLEAR, type Protocol, type Session } from "../../src/pipeline/session.ts";

const stats = new AppStats("t", "a", createMetrics(new Registry()));
const OFF = new AccessLog("off");

/** A session without a connection: nothing refused, nothing counted. */
class TestSession implements Session {
  readonly protocol: Protocol = "HTTP/1.1";
  readonly secure = false;
  readonly port = 0;
  readonly tls = IN_THE_CLEAR;
  readonly address = "";
  readonly peerPort = 0;
  readonly streams = 0;
  readonly contentLength = -1;
  readonly upgrade = null;
  constructor(
    readonly req: ClientRequest,
    readonly target: string,
    readonly authority: string,
    readonly peer: string,
    readonly form: AnswerForm,
  ) {}
  headLimit(): number {
    return 0;
  }
  misdirected(): boolean {
    return false;
  }
  watchGone(): boolean {
    return false;
  }
  started(): void {}
  finish(_ex: unknown, answer: Answer): Answer {
    return answer;
  }
}

/** What `testExchange` varies. */
export interface TestExchangeOptions {
  /** The authority; default `site.test`. */
  host?: string;
  method?: string;
  headers?: Record<string, string>;
  /** The client address after `trusted_proxies` (the peer is 127.0.0.1); default the peer. */
  client?: string;
  /** Replaces the request made from the other options. */
  req?: ClientRequest;
  /** Served by scalwsd's own front (answers are `FrontAnswer`s); default false (Responses). */
  raw?: boolean;
}

/** An exchange for `{method} http://{host}{target}` from 127.0.0.1. */
export function testExchange(target = "/x", o: TestExchangeOptions = {}): Exchange {
  const host = o.host ?? "site.test";
  const q = target.indexOf("?");
  const req = o.req ??
    new Request(`http://${host}${target}`, { method: o.method ?? "GET", headers: o.headers });
  return new Exchange({
    session: new TestSession(req, target, host, "127.0.0.1", o.raw ? FRONT_FORM : WEB_FORM),
    path: q < 0 ? target : target.slice(0, q),
    query: q < 0 ? "" : target.slice(q),
    authority: host,
    peerTrusted: false,
    client: o.client ?? "127.0.0.1",
    stats,
    start: performance.now(),
    log: OFF,
    bodyTimeout: 0,
    span: null,
  });
}

/** A handler answering `body` and recording the path it saw. */
export function recorder(body = "ok", headers: Record<string, string> = {}) {
  const seen: string[] = [];
  const handler: Handler = {
    handle(ex) {
      seen.push(ex.path);
      ex.answered(200);
      return new Response(body, { headers });
    },
  };
  return { handler, seen };
}
