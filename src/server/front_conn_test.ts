import assert from "node:assert/strict";
import { plain } from "../base/mod.ts";
import { FrontRequest, NO_REQUEST } from "../front/mod.ts";
import type { FrontConnection } from "../front/mod.ts";
import { RequestHead } from "../front/parse_request_head.ts";
import { ClientConn } from "./client_conn.ts";
import type { Dispatcher } from "./dispatcher.ts";
import { FrontServe } from "./front_conn.ts";

Deno.test("FrontServe: lets the request go once answered; the protocol stays the request's", () => {
  const seen: string[] = [];
  const d = {
    draining: false,
    challenges: null,
    serve(s: FrontServe) {
      seen.push(`${s.protocol} ${s.target}`);
      return plain(200, "ok");
    },
  } as unknown as Dispatcher;
  const c = new ClientConn(null as unknown as Deno.Conn, "127.0.0.1", null, 0);
  const session = new FrontServe(d, c, { redirect: null });
  assert.equal(session.req, NO_REQUEST, "nothing held before the first request");
  const head = new RequestHead();
  head.minor = 0;
  head.target = "/x";
  const req = new FrontRequest(head, null, false);
  session.serve(req, null as unknown as FrontConnection);
  assert.deepEqual(seen, ["HTTP/1.0 /x"]);
  assert.equal(session.req, req);
  session.answered();
  assert.equal(session.req, NO_REQUEST, "an idle connection keeps no request head");
  // A streamed body's access log line is written as its answer ends, after this.
  assert.equal(session.protocol, "HTTP/1.0");
});
