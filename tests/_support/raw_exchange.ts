/** A raw HTTP/1.1 exchange: bytes out on a fresh connection, every byte back. */
import { concat, latin1 } from "./bytes.ts";

/** Closes `conn`, ignoring that it may be closed already. */
export function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch { /* closed already */ }
}

/**
 * Writes `bytes` on a fresh connection and reads until the peer closes, `idleMs` pass without
 * a byte once something arrived, or `deadlineMs` pass. Never throws.
 */
export async function exchange(
  port: number,
  bytes: Uint8Array,
  idleMs = 250,
  deadlineMs = 2000,
): Promise<Uint8Array> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  let got: Uint8Array = new Uint8Array(0);
  const stop = () => closeQuietly(conn);
  const deadline = setTimeout(stop, deadlineMs);
  let idle: ReturnType<typeof setTimeout> | undefined;
  try {
    await conn.write(bytes);
    const buf = new Uint8Array(65536);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      got = concat([got, buf.subarray(0, n)]);
      clearTimeout(idle);
      idle = setTimeout(stop, idleMs);
    }
  } catch { /* reset, or closed by a timer */ }
  clearTimeout(deadline);
  clearTimeout(idle);
  stop();
  return got;
}

/** Final statuses (1xx skipped) of the responses in `bytes`, with their bodies. */
export function responses(bytes: Uint8Array): { status: number; body: string }[] {
  const text = latin1(bytes);
  const out: { status: number; body: string }[] = [];
  let pos = 0;
  while (pos < text.length) {
    const end = text.indexOf("\r\n\r\n", pos);
    if (end < 0) break;
    const head = text.slice(pos, end);
    const status = Number(head.slice(9, 12));
    const cl = /\r\ncontent-length: (\d+)/i.exec(head);
    const length = status < 200 ? 0 : cl ? Number(cl[1]) : text.length - end - 4;
    if (status >= 200) out.push({ status, body: text.slice(end + 4, end + 4 + length) });
    pos = end + 4 + length;
  }
  return out;
}
