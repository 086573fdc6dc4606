/**
 * A member that answers before it has read the request body (an early 413) and closes: its
 * answer reaches the client, with `Connection: close`, and is not a member failure.
 */
import assert from "node:assert/strict";
import {
  adminFetch,
  app,
  members,
  proxy,
  type RawServer as RawServerMember,
  rawServer,
  readHead,
  scalwsYaml,
  startScalwsd,
} from "./_support/mod.ts";
import { RawConn } from "./_support/raw_conn.ts";
import { Connector, ConnPool, send } from "../src/http1/mod.ts";
import {
  bodyText,
  outbound,
  RawServer,
  sendOptions,
  writeText,
} from "../src/http1/_test_servers.ts";

const BODY = 4 * 1024 * 1024;
const EARLY = "HTTP/1.1 413 Payload Too Large\r\nContent-Length: 9\r\nConnection: close\r\n\r\n" +
  "too large";

/** Reads the request head only, answers 413 and closes with the body unread (a reset). */
function earlyMember(): RawServerMember & { heads(): number } {
  let heads = 0;
  const server = rawServer(async (conn) => {
    await readHead(conn);
    heads++;
    await conn.write(new TextEncoder().encode(EARLY));
    conn.close();
  });
  return Object.assign(server, { heads: () => heads });
}

/** Uploads BODY bytes in 64 KiB pieces while the answer is awaited; write errors are expected. */
async function upload(port: number, path: string): Promise<{ status: number; head: string }> {
  await using c = await RawConn.open(port);
  await c.write(`POST ${path} HTTP/1.1\r\nHost: app.test\r\nContent-Length: ${BODY}\r\n\r\n`);
  const piece = new Uint8Array(65536).fill(120);
  const writing = (async () => {
    for (let sent = 0; sent < BODY; sent += piece.length) await c.write(piece);
  })().catch(() => {});
  const res = await c.response(10_000);
  await writing;
  assert.ok(res !== null, "no answer");
  assert.equal(res.body, "too large");
  return { status: res.status, head: res.head.toLowerCase() };
}

Deno.test("early answer: a member's 413 before the body is read reaches the client", async () => {
  await using a = earlyMember();
  await using b = earlyMember();
  await using s = await startScalwsd(scalwsYaml({
    upstreams: {
      pool: {
        members: members(a, b),
        passive_health: { failures: 1, cooldown: "10s" },
        retries: 1,
      },
    },
    apps: [app(proxy("pool"), {
      name: "app",
      domains: ["app.test"],
      routes: [
        {
          path: "/single",
          max_body: "16MiB",
          runtime: { type: "proxy", upstream: `http://${a.address}` },
        },
        { path: "/pooled", max_body: "16MiB", runtime: proxy("pool") },
      ],
    })],
  }));
  const port = Number(new URL(s.url).port);
  for (const path of ["/single", "/pooled", "/pooled", "/pooled"]) {
    const res = await upload(port, path);
    assert.equal(res.status, 413, path);
    // Part of the client's body was never read: the connection cannot be kept.
    assert.match(res.head, /\r\nconnection: close/, path);
  }
  // Each upload went to one member once: an answer is not a failure, so no retry.
  assert.equal(a.heads() + b.heads(), 4);
  const pools = await (await adminFetch(s.adminSocket, "/v1/upstreams")).json();
  const view = pools.upstreams.find((p: { name: string }) => p.name === "pool").members;
  for (const m of view) {
    assert.equal(m.failures, 0, m.address);
    assert.equal(m.state, "healthy", m.address);
  }
});

Deno.test("early answer: heard while the client is still uploading, without a close", async () => {
  // This member answers at once, keeps the connection open and reads nothing more.
  let release!: () => void;
  const hold = new Promise<void>((r) => (release = r));
  await using member = rawServer(async (conn) => {
    await readHead(conn);
    await conn.write(new TextEncoder().encode(EARLY));
    await hold;
  });
  const direct = {
    type: "proxy",
    upstream: `http://${member.address}`,
    response_timeout: "30s",
  };
  await using s = await startScalwsd(scalwsYaml({
    server: { admin: undefined },
    apps: [app(direct, {
      name: "app",
      domains: ["app.test"],
      routes: [{ path: "/", max_body: "16MiB", runtime: direct }],
    })],
  }));
  await using c = await RawConn.open(Number(new URL(s.url).port));
  try {
    // A quarter of the body, then the client pauses: the answer must not wait for the rest.
    await c.write(`POST /up HTTP/1.1\r\nHost: app.test\r\nContent-Length: ${BODY}\r\n\r\n`);
    await c.write(new Uint8Array(BODY / 4).fill(120));
    const started = performance.now();
    const res = await c.response(5_000);
    assert.ok(res !== null, "no answer while the upload paused");
    assert.equal(res.status, 413);
    assert.equal(res.body, "too large");
    assert.match(res.head.toLowerCase(), /\r\nconnection: close/);
    assert.ok(performance.now() - started < 4_000);
  } finally {
    release();
  }
});

Deno.test("early answer: a byte body the member will not read does not hold the answer", async () => {
  let release!: () => void;
  const hold = new Promise<void>((r) => (release = r));
  const member = new RawServer(async (conn) => {
    await readHead(conn);
    await writeText(conn, EARLY);
    await hold; // open, reading nothing: 32 MiB cannot fit in the socket buffers
  });
  const pool = new ConnPool(
    new Connector({
      kind: "tcp",
      hostname: "127.0.0.1",
      port: member.port,
      canonical: `127.0.0.1:${member.port}`,
    }, null),
  );
  try {
    const body = new Uint8Array(32 * 1024 * 1024).fill(120);
    const started = performance.now();
    const res = await send(
      pool,
      outbound("POST", "/up", { body, bodyLength: body.length }),
      sendOptions(30_000),
    );
    assert.equal(res.status, 413);
    assert.equal(res.bodyCut, true);
    assert.equal(await bodyText(res), "too large");
    assert.ok(performance.now() - started < 5_000);
  } finally {
    release();
    pool.close();
    await member.close();
  }
});
