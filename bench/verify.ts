/** The sanity checks run against each proxy before it is measured. */

import { type BenchLayout, CACHED_BODY, COOKIE, HELLO, PATHS, smallBody } from "./configs.ts";

/** Sizes of the member's static files and of the POST body. */
export const FILE_16K = 16 * 1024;
export const FILE_1M = 1024 * 1024;
export const POST_BYTES = 64 * 1024;

/** Fetches `path` from `port`: status, body bytes and text, and the set-cookie header. */
export async function get(port: number, path: string, init: RequestInit = {}) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    ...init,
    signal: AbortSignal.timeout(5000),
  });
  const body = new Uint8Array(await res.arrayBuffer());
  return {
    status: res.status,
    body,
    text: new TextDecoder().decode(body),
    cookie: res.headers.get("set-cookie"),
  };
}

function expect(ok: boolean, server: string, what: string): void {
  if (!ok) throw new Error(`Sanity check failed for ${server}: ${what}`);
}

/**
 * Checks that `server` on `port` answers every scenario's path as the members would: bodies,
 * file sizes, the POST, both members reached round robin, cookies honoured.
 */
export async function verify(server: string, port: number, l: BenchLayout): Promise<void> {
  const a = smallBody("a");
  const b = smallBody("b");
  let r = await get(port, PATHS.small);
  expect(
    r.status === 200 && r.text === a,
    server,
    `GET / gave ${r.status} ${JSON.stringify(r.text.slice(0, 80))}`,
  );
  r = await get(port, PATHS.file16k);
  expect(
    r.status === 200 && r.body.length === FILE_16K,
    server,
    `16 KiB file gave ${r.status}, ${r.body.length} bytes`,
  );
  r = await get(port, PATHS.file1m);
  expect(
    r.status === 200 && r.body.length === FILE_1M,
    server,
    `1 MiB file gave ${r.status}, ${r.body.length} bytes`,
  );
  r = await get(port, PATHS.post, { method: "POST", body: new Uint8Array(POST_BYTES) });
  expect(
    r.status === 200 && r.text === "a ok\n",
    server,
    `POST gave ${r.status} ${JSON.stringify(r.text)}`,
  );
  // The floor proxies to member a only: no pools to check.
  if (server === "floor") return;
  const seen = new Set<string>();
  for (let i = 0; i < 4; i++) seen.add((await get(port, PATHS.rr)).text);
  expect(
    seen.size === 2 && seen.has(a) && seen.has(b),
    server,
    `round robin reached ${[...seen].join(" | ")}`,
  );
  const byCookie = async (v: string) =>
    (await get(port, PATHS.hash, { headers: { cookie: `${COOKIE}=${v}` } })).text;
  const ca = await byCookie(l.affinity[0]);
  const cb = await byCookie(l.affinity[1]);
  expect(
    ca === (await byCookie(l.affinity[0])),
    server,
    "the same cookie reached different members",
  );
  if (server === "nginx") {
    // nginx hashes the cookie's value: which member each value lands on is its own choice.
    expect(
      (ca === a || ca === b) && (cb === a || cb === b),
      server,
      `cookie pool answered ${ca} | ${cb}`,
    );
  } else {
    expect(ca === a && cb === b, server, `affinity cookies reached ${ca.trim()} | ${cb.trim()}`);
  }
  if (server === "scalwsd") {
    // The cookie scalwsd issues must be one of the values the bench computed.
    const c = (await get(port, PATHS.hash)).cookie ?? "";
    const v = new RegExp(`^${COOKIE}=([0-9a-f]{32})`).exec(c)?.[1];
    expect(
      v !== undefined && l.affinity.includes(v),
      server,
      `issued affinity cookie ${JSON.stringify(c)}`,
    );
    r = await get(port, PATHS.one);
    expect(r.status === 200 && r.text === a, server, `1-member pool gave ${r.status}`);
  }
  if (server === "haproxy") return;
  if (l.fpmSocket !== undefined) {
    r = await get(port, PATHS.php);
    expect(r.status === 200 && r.text === HELLO, server, `php gave ${r.status} ${r.text}`);
  }
  if (l.nodePort !== undefined) {
    r = await get(port, PATHS.node);
    expect(r.status === 200 && r.text === HELLO, server, `node gave ${r.status} ${r.text}`);
  }
}

/**
 * Checks the cache scenarios' paths on `server`: the cacheable object is answered whole, and a
 * second request for it does not reach the member (`memberRequests` reads member a's count).
 */
export async function verifyCache(
  server: string,
  port: number,
  memberRequests: () => Promise<number | undefined>,
): Promise<void> {
  const first = await get(port, PATHS.cached);
  expect(
    first.status === 200 && first.text === CACHED_BODY,
    server,
    `${PATHS.cached} gave ${first.status}, ${first.body.length} bytes`,
  );
  const before = await memberRequests();
  const again = await get(port, PATHS.cached);
  const after = await memberRequests();
  expect(
    again.text === CACHED_BODY,
    server,
    `${PATHS.cached} again gave ${again.body.length} bytes`,
  );
  // The status read itself is one request.
  expect(
    before !== undefined && after !== undefined && after - before === 1,
    server,
    `a cached object reached the member again (${before} -> ${after} requests)`,
  );
  const storm = await get(port, PATHS.storm);
  expect(
    storm.status === 200 && storm.text === CACHED_BODY,
    server,
    `${PATHS.storm} gave ${storm.status}`,
  );
}
