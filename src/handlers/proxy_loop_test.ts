import assert from "node:assert/strict";
import type { ProxyRuntime } from "../config/types.ts";
import { bytes, FakeSocket } from "../http1/_fake_socket.ts";
import { ConnPool } from "../http1/conn_pool.ts";
import type { Socket, SocketFactory, UpstreamResponse } from "../http1/types.ts";
import { UpstreamError } from "../http1/upstream_error.ts";
import type { Exchange } from "../pipeline/exchange.ts";
import { testExchange } from "../../tests/_support/test_exchange.ts";
import { prepareBody, type PreparedBody } from "./proxy_body.ts";
import { Attempt, proxyLoop } from "./proxy_loop.ts";

const RT: ProxyRuntime = {
  type: "proxy",
  target: { kind: "pool", pool: "p" },
  preserve_host: false,
  connect_timeout: 1000,
  response_timeout: 1000,
  websocket: false,
};

function exchange(): Exchange {
  return testExchange("/x", { host: "a.test", req: new Request("http://a.test/x") });
}

/** A member that answers `status` once, or refuses connections when `status` is 0. */
function member(status: number): ConnPool {
  const factory: SocketFactory = {
    connect(): Promise<Socket> {
      if (status === 0) {
        return Promise.reject(new UpstreamError("connect", "refused", "refused", false));
      }
      const text = `HTTP/1.1 ${status} X\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok`;
      return Promise.resolve(new FakeSocket(bytes(text)));
    },
  };
  return new ConnPool(factory);
}

/** Attempts that record what the loop asked them, retrying on every failure while `next` lasts. */
class Scripted extends Attempt {
  readonly authority = "m";
  readonly upgrade = false;
  readonly address = { kind: "unix", path: "/m", canonical: "unix:/m" } as const;
  readonly poolName = "";
  readonly body = prepareBody(
    { req: new Request("http://a.test/"), bodyTimeout: 0 },
    { maxBody: 1000, keep: false, keepWithin: 0 },
  ) as PreparedBody;

  constructor(
    ex: Exchange,
    readonly name: string,
    readonly conns: ConnPool,
    private readonly rest: Scripted[],
    private readonly log: string[],
  ) {
    super(ex, RT);
  }
  failed(err: UpstreamError): boolean {
    this.log.push(`${this.name} failed ${err.phase}`);
    return true;
  }
  answered(res: UpstreamResponse): boolean {
    this.log.push(`${this.name} answered ${res.status}`);
    return res.status === 503;
  }
  next(): Attempt | null {
    return this.rest.shift() ?? null;
  }
  delivered(): string | undefined {
    this.log.push(`${this.name} delivered`);
    return "c=1";
  }
  gaveUp(): void {
    this.log.push(`${this.name} gave up`);
  }
  protected ended(ok: boolean, cancelled: boolean): void {
    this.log.push(`${this.name} ended ${ok}${cancelled ? " cancelled" : ""}`);
  }
}

Deno.test("proxyLoop moves on after a failure and passes the answer on with its cookie", async () => {
  const ex = exchange();
  const log: string[] = [];
  const rest: Scripted[] = [];
  const first = new Scripted(ex, "a", member(0), rest, log);
  rest.push(new Scripted(ex, "b", member(503), rest, log));
  rest.push(new Scripted(ex, "c", member(200), rest, log));
  const res = await proxyLoop(first) as Response;
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("set-cookie"), "c=1");
  assert.equal(await res.text(), "ok");
  // A small body arrives whole with the head: the attempt has ended before it is answered,
  // and the release after a dropped answer changes nothing.
  assert.deepEqual(log, [
    "a ended true",
    "a failed connect",
    "b ended true",
    "b answered 503",
    "b ended true",
    "c ended true",
    "c answered 200",
    "c delivered",
  ]);
  assert.equal(ex.status, 200);
});

Deno.test("proxyLoop answers the last failure's status when no attempt is left", async () => {
  const ex = exchange();
  const log: string[] = [];
  const res = await proxyLoop(new Scripted(ex, "a", member(503), [], log)) as Response;
  assert.equal(res.status, 503);
  assert.equal(await res.text(), "Service Unavailable\n");
  assert.deepEqual(log, ["a ended true", "a answered 503", "a ended true", "a gave up"]);
  assert.equal(ex.status, 503);

  const log2: string[] = [];
  const refused = await proxyLoop(new Scripted(exchange(), "a", member(0), [], log2));
  assert.equal(refused.status, 502);
  assert.deepEqual(log2, ["a ended true", "a failed connect", "a gave up"]);
});
