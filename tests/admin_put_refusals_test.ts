/** Refused admin PUT bodies: each gets the documented status and message, nothing changes. */
import assert from "node:assert/strict";
import { bytesOf } from "./_support/bytes.ts";
import { adminFetch, app, members, proxy, scalwsYaml, startScalwsd } from "./_support/mod.ts";
import { RecordingMember } from "./_support/recording_member.ts";
import type { Scalwsd } from "./_support/scalwsd.ts";

const enc = new TextEncoder();

const ADMIN_CONFIG = scalwsYaml({
  server: { default_host: "a.test" },
  upstreams: { dyn: { members_from: "api" }, fixed: { members: members("127.0.0.1:9") } },
  apps: [app(proxy("dyn"))],
});

const MAX_ADMIN_BODY = 2 * 1024 * 1024;
const TOO_LARGE = `body is larger than ${MAX_ADMIN_BODY} bytes`;

/** Sends a PUT over the admin socket with a raw body; a stream is sent chunked. */
async function putRaw(
  s: Scalwsd,
  pool: string,
  body: string | Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>,
): Promise<{ status: number; error: string }> {
  const res = await adminFetch(s.adminSocket, `/v1/upstreams/${pool}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body,
  });
  const json = await res.json();
  return { status: res.status, error: json.error };
}

/** A stream of `total` bytes of JSON-ish padding in 64 KiB chunks, without a length. */
function chunkedBody(total: number): ReadableStream<Uint8Array> {
  let sent = 0;
  const piece = enc.encode(" ".repeat(65536));
  return new ReadableStream({
    pull(c) {
      if (sent >= total) return c.close();
      const n = Math.min(piece.length, total - sent);
      c.enqueue(piece.subarray(0, n));
      sent += n;
    },
  });
}

Deno.test("admin PUT refusals: each bad body gets the documented status and message, nothing changes", async () => {
  await using m = new RecordingMember();
  await using s = await startScalwsd(ADMIN_CONFIG);
  const sock = s.adminSocket;
  const addr = m.address;
  assert.equal(
    (await putRaw(s, "dyn", JSON.stringify({ members: [{ address: addr }] }))).status,
    200,
  );
  const before = await (await adminFetch(sock, "/v1/upstreams")).json();
  const many = Array.from(
    { length: 10_001 },
    (_, i) => ({ address: `10.1.${i >> 8}.${i & 255}:80` }),
  );
  const cases: [string, string, number, string][] = [
    // Malformed JSON.
    ["truncated JSON", '{"members": [', 400, "body: invalid JSON"],
    ["trailing comma", `{"members": [{"address": "${addr}"},]}`, 400, "body: invalid JSON"],
    ["single quotes", "{'members': []}", 400, "body: invalid JSON"],
    ["empty body", "", 400, "body: invalid JSON"],
    ["two documents", '{"members": []}{"members": []}', 400, "body: invalid JSON"],
    ["not UTF-8", "\xff\xfe", 400, "body: invalid JSON"],
    // Wrong shapes and types.
    ["null", "null", 400, 'body: must be {"members": [...]}'],
    ["a list", `[{"address": "${addr}"}]`, 400, 'body: must be {"members": [...]}'],
    ["members a string", `{"members": "${addr}"}`, 400, 'body: must be {"members": [...]}'],
    ["members null", '{"members": null}', 400, 'body: must be {"members": [...]}'],
    ["an extra key", '{"members": [], "pool": "dyn"}', 400, 'body: unknown key "pool"'],
    [
      "an entry that is a string",
      `{"members": ["${addr}"]}`,
      400,
      "members[0]: must be a mapping {address, weight}",
    ],
    [
      "an entry that is null",
      '{"members": [null]}',
      400,
      "members[0]: must be a mapping {address, weight}",
    ],
    ["no address", '{"members": [{"weight": 2}]}', 400, "members[0].address: is required"],
    [
      "a numeric address",
      '{"members": [{"address": 8080}]}',
      400,
      "members[0].address: must be a string",
    ],
    [
      "a string weight",
      `{"members": [{"address": "${addr}", "weight": "2"}]}`,
      400,
      "members[0].weight: must be an integer",
    ],
    [
      "a fractional weight",
      `{"members": [{"address": "${addr}", "weight": 1.5}]}`,
      400,
      "members[0].weight: must be an integer",
    ],
    [
      "a null weight",
      `{"members": [{"address": "${addr}", "weight": null}]}`,
      400,
      "members[0].weight: must be an integer",
    ],
    [
      "an unknown entry key",
      `{"members": [{"address": "${addr}", "port": 80}]}`,
      400,
      'members[0]: unknown key "port"',
    ],
    [
      "max_conns on a plain-HTTP pool (as the configuration file refuses it)",
      `{"members": [{"address": "${addr}", "max_conns": 4}]}`,
      400,
      "members[0].max_conns: only allowed with protocol: fastcgi",
    ],
    [
      "a port out of range",
      '{"members": [{"address": "127.0.0.1:65536"}]}',
      400,
      'members[0].address: invalid address "127.0.0.1:65536": port must be between 1 and 65535',
    ],
    [
      "two errors at once",
      `{"members": [{"address": "${addr}", "weight": 0}, {"address": 1}]}`,
      400,
      "members[0].weight: must be between 1 and 1000\nmembers[1].address: must be a string",
    ],
    // 10,001 members.
    [
      "10,001 members",
      JSON.stringify({ members: many }),
      400,
      "members: at most 10000 members allowed",
    ],
    // Duplicates, also under different spellings of one address.
    [
      "a duplicate",
      JSON.stringify({ members: [{ address: addr }, { address: addr, weight: 2 }] }),
      400,
      `members[1].address: duplicate member "${addr}"`,
    ],
    [
      "a duplicate IPv6 spelling",
      '{"members": [{"address": "[::1]:8080"}, {"address": "[0:0:0::1]:8080"}]}',
      400,
      'members[1].address: duplicate member "[::1]:8080"',
    ],
    [
      "a duplicate host name in another case",
      '{"members": [{"address": "API.internal:80"}, {"address": "api.INTERNAL:80"}]}',
      400,
      'members[1].address: duplicate member "api.internal:80"',
    ],
    [
      "a unix: member beside another",
      `{"members": [{"address": "${addr}"}, {"address": "unix:/run/api.sock"}]}`,
      400,
      "members[1].address: a unix: member must be the only member of its pool",
    ],
    // Huge bodies, with a length.
    ["2 MiB + 1 with a length", " ".repeat(MAX_ADMIN_BODY + 1), 413, TOO_LARGE],
    // Pools that cannot take a PUT.
    ["an unknown pool", '{"members": []}', 404, 'no pool named "nope"'],
    [
      "a file pool",
      '{"members": []}',
      409,
      'pool "fixed" has members_from: file; change its members in the configuration',
    ],
  ];
  const refusals: string[] = [];
  for (const [what, body, status, error] of cases) {
    const pool = status === 404 ? "nope" : status === 409 ? "fixed" : "dyn";
    const r = await putRaw(s, pool, body.startsWith("\xff") ? bytesOf(body) : body);
    assert.deepEqual(r, { status, error }, what);
    refusals.push(`refused ${status}`);
  }
  // Huge bodies without a length (chunked): cut at 2 MiB.
  for (const total of [MAX_ADMIN_BODY + 1, 8 * MAX_ADMIN_BODY]) {
    assert.deepEqual(await putRaw(s, "dyn", chunkedBody(total)), {
      status: 413,
      error: TOO_LARGE,
    });
    refusals.push("refused 413");
  }
  assert.deepEqual(await (await adminFetch(sock, "/v1/upstreams")).json(), before);
  const audits = s.logs.map((l) => JSON.parse(l)).filter((l) => l.event === "admin_audit");
  assert.deepEqual(audits.slice(1).map((a) => a.result), refusals);

  // Exactly 2 MiB is accepted, with or without a length.
  const same = JSON.stringify({ members: [{ address: addr }] });
  const padded = same + " ".repeat(MAX_ADMIN_BODY - same.length);
  assert.equal((await putRaw(s, "dyn", padded)).status, 200);
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(enc.encode(padded));
      c.close();
    },
  });
  assert.equal((await putRaw(s, "dyn", stream)).status, 200);
  // The same members again: nothing changes, not even updated_at.
  assert.deepEqual(await (await adminFetch(sock, "/v1/upstreams")).json(), before);
  assert.equal(await (await fetch(s.url + "/")).text(), "ok");
});

Deno.test("a PUT to the pool of a supervised application's workers is 409 naming what it is", async () => {
  await using s = await startScalwsd(scalwsYaml({
    apps: [app({
      type: "app",
      command: [
        "node",
        "-e",
        "require('http').createServer((q,r)=>r.end()).listen(process.argv[1])",
        "{socket}",
      ],
    })],
  }));
  const before = await (await adminFetch(s.adminSocket, "/v1/upstreams/t.a")).json();
  assert.equal(before.members.length, 1);
  assert.deepEqual(await putRaw(s, "t.a", '{"members": [{"address": "127.0.0.1:9"}]}'), {
    status: 409,
    error:
      'pool "t.a" holds the workers of a supervised application; change its runtime (workers) in the configuration',
  });
  assert.deepEqual(await (await adminFetch(s.adminSocket, "/v1/upstreams/t.a")).json(), before);
});
