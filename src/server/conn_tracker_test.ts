import assert from "node:assert/strict";
import type { LimitsConfig } from "../config/types.ts";
import { ClientConn, CLOSED, GOING_AWAY, SERVING } from "./client_conn.ts";
import { ConnTracker, GOAWAY_GRACE } from "./conn_tracker.ts";
import type { ServedConnection } from "./deno_internal.ts";

const LIMITS: LimitsConfig = {
  header_read_timeout: 1000,
  idle_timeout: 2000,
  body_read_timeout: 1000,
  max_header_size: 65_536,
  max_header_count: 128,
  max_uri_length: 8192,
  max_connections: 0,
  max_concurrent_streams: 128,
  max_resets_per_second: 100,
};

/** What the tracker did to a connection's server: graceful shutdowns and kills. */
class FakeServer implements ServedConnection {
  readonly calls: string[] = [];
  readonly finished = Promise.resolve();
  shutdown(): Promise<void> {
    this.calls.push("shutdown");
    return Promise.resolve();
  }
  kill(): void {
    this.calls.push("kill");
  }
}

/** A served connection (HTTP/2 when `h2`) that has answered one request, idle since 0. */
function served(h2: boolean): { c: ClientConn; server: FakeServer } {
  const c = new ClientConn({} as Deno.Conn, "192.0.2.1", null, 0);
  const server = new FakeServer();
  c.server = server;
  c.phase = SERVING;
  c.h2 = h2;
  c.requests = 1;
  return { c, server };
}

Deno.test("ConnTracker closes an idle HTTP/1.1 connection but tells an idle HTTP/2 one GOAWAY first", () => {
  let now = 0;
  const t = new ConnTracker(() => LIMITS, () => now);
  const h1 = served(false);
  const h2 = served(true);
  t.add(h1.c);
  t.add(h2.c);
  now = 1999;
  t.sweep();
  assert.deepEqual([h1.server.calls, h2.server.calls], [[], []]);
  now = 2000;
  t.sweep();
  assert.deepEqual([h1.c.phase, h1.server.calls], [CLOSED, ["kill"]]);
  assert.deepEqual([h2.c.phase, h2.server.calls], [GOING_AWAY, ["shutdown"]]);
  assert.equal(h2.c.deadline, 2000 + GOAWAY_GRACE);
  // A stream still in flight at the deadline keeps it; once none is left it is closed.
  h2.c.active = 1;
  now = 2000 + GOAWAY_GRACE;
  t.sweep();
  assert.equal(h2.c.phase, GOING_AWAY);
  h2.c.active = 0;
  t.sweep();
  assert.deepEqual([h2.c.phase, h2.server.calls], [CLOSED, ["shutdown", "kill"]]);
  t.remove(h1.c);
  t.remove(h2.c);
});

Deno.test("ConnTracker closes an abusive HTTP/2 connection at its deadline, streams or not", () => {
  let now = 0;
  const t = new ConnTracker(() => LIMITS, () => now);
  const { c, server } = served(true);
  t.add(c);
  c.active = 5;
  c.abusive = true;
  c.goAway(now + GOAWAY_GRACE);
  now = GOAWAY_GRACE - 1;
  t.sweep();
  assert.equal(c.phase, GOING_AWAY);
  now = GOAWAY_GRACE;
  t.sweep();
  assert.deepEqual([c.phase, server.calls], [CLOSED, ["shutdown", "kill"]]);
  t.remove(c);
});

Deno.test("ClientConn.resetSeen counts resets within one second and starts over after it", () => {
  const { c } = served(true);
  const over = (at: number, n: number) => {
    let last = false;
    for (let i = 0; i < n; i++) last = c.resetSeen(at, 3);
    return last;
  };
  assert.equal(over(1000, 3), false, "3 resets within a second are allowed");
  assert.equal(over(1999, 1), true, "the 4th within the same second is not");
  assert.equal(over(2000, 3), false, "a new second starts over");
  assert.equal(over(2500, 1), true);
});
