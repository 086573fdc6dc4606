/**
 * `floor`: the least a proxy can do on this runtime, for the bench to show how close scalwsd
 * comes to what Deno allows. `Deno.listen` + `Deno.connect`, one member connection per client
 * connection, read the head, forward it, read the answer, write it back: no Web `Request`,
 * `Response` or `Headers`, no streams, no routing, no checks. Content-Length framing only
 * (what the bench's members send); not a server for anything else.
 *
 * Run: `deno run --allow-net bench/floor.ts LISTEN_PORT MEMBER_PORT`.
 */

const CR_LF_CR_LF = [0x0d, 0x0a, 0x0d, 0x0a];

/** Offset just past `\r\n\r\n` in `buf[from, end)`, or -1. */
function headEnd(buf: Uint8Array, from: number, end: number): number {
  for (let i = Math.max(0, from); i + 3 < end; i++) {
    if (
      buf[i] === CR_LF_CR_LF[0] && buf[i + 1] === 0x0a && buf[i + 2] === 0x0d && buf[i + 3] === 0x0a
    ) return i + 4;
  }
  return -1;
}

const decoder = new TextDecoder();

/** Content-Length of the head in `buf[0, end)` (0 when absent), and whether it asks to close. */
function framing(buf: Uint8Array, end: number): { length: number; close: boolean } {
  const head = decoder.decode(buf.subarray(0, end)).toLowerCase();
  const m = /\r\ncontent-length: *(\d+)/.exec(head);
  return { length: m === null ? 0 : Number(m[1]), close: head.includes("\r\nconnection: close") };
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) done += await conn.write(bytes.subarray(done));
}

/** Reads one message (head + Content-Length body) from `from` and writes it to `to`. */
async function pass(
  from: Deno.Conn,
  to: Deno.Conn,
  buf: Uint8Array,
  state: { start: number; end: number },
): Promise<boolean | null> {
  let scan = state.start;
  let end = -1;
  for (;;) {
    end = headEnd(buf, scan - 3, state.end);
    if (end >= 0) break;
    if (state.start > 0) {
      buf.copyWithin(0, state.start, state.end);
      state.end -= state.start;
      state.start = 0;
    }
    scan = state.end;
    const n = await from.read(buf.subarray(state.end));
    if (n === null) return null;
    state.end += n;
  }
  const f = framing(buf.subarray(state.start), end - state.start);
  let left = f.length;
  const have = Math.min(left, state.end - end);
  await writeAll(to, buf.subarray(state.start, end + have));
  left -= have;
  state.start = end + have;
  if (state.start === state.end) state.start = state.end = 0;
  while (left > 0) {
    const n = await from.read(buf.subarray(0, Math.min(buf.length, left)));
    if (n === null) return null;
    await writeAll(to, buf.subarray(0, n));
    left -= n;
  }
  return f.close;
}

async function serve(client: Deno.Conn, memberPort: number): Promise<void> {
  const member = await Deno.connect({ hostname: "127.0.0.1", port: memberPort });
  const cbuf = new Uint8Array(65536);
  const mbuf = new Uint8Array(65536);
  const cs = { start: 0, end: 0 };
  const ms = { start: 0, end: 0 };
  try {
    for (;;) {
      const close = await pass(client, member, cbuf, cs);
      if (close === null) break;
      if ((await pass(member, client, mbuf, ms)) === null || close) break;
    }
  } catch {
    // a peer went away
  }
  client.close();
  member.close();
}

if (import.meta.main) {
  const [port, memberPort] = Deno.args.map(Number);
  // Exit cleanly on SIGTERM so that `--cpu-prof` (the bench's --profile) writes its profile.
  Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
  const listener = Deno.listen({ hostname: "127.0.0.1", port });
  for await (const conn of listener) serve(conn, memberPort);
}
