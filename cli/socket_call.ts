/** JSON calls over a Unix socket for `scalwsd ctl` (admin socket and controller socket). */

/** A refusal or an unreachable socket: `message` is what the user reads. */
export class SocketCallError extends Error {}

/**
 * Sends one request to `socket` and returns the JSON answer. Throws `SocketCallError` with
 * `STATUS: server message` on any refusal, or a "cannot reach" message naming `what` (for
 * example "the admin socket") and `hint` when the socket is missing or refuses.
 */
export async function callSocket(
  socket: string,
  what: string,
  hint: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(socket);
  } catch {
    throw new SocketCallError(`cannot reach ${what} ${socket}: no such file (${hint})`);
  }
  if (info.isSocket === false) {
    throw new SocketCallError(`cannot reach ${what} ${socket}: not a socket (${hint})`);
  }
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
  try {
    let res: Response;
    try {
      res = await fetch(`http://localhost${path}`, {
        client,
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new SocketCallError(`cannot reach ${what} ${socket}: ${unreachable(err, what, hint)}`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = { error: text.trim() };
    }
    if (!res.ok) {
      const msg = (json as { error?: string }).error ?? `HTTP ${res.status}`;
      throw new SocketCallError(`${res.status}: ${msg}`);
    }
    return json;
  } finally {
    client.close();
  }
}

/**
 * Why a connection to the socket failed, in words: fetch says only "fetch failed" and keeps the
 * reason (refused, permission denied) in its cause.
 */
function unreachable(err: unknown, what: string, hint: string): string {
  const cause = String((err as Error)?.cause ?? (err as Error)?.message ?? err);
  if (/Connection refused/i.test(cause)) {
    return `connection refused (nothing listens there: ${hint})`;
  }
  if (/Permission denied/i.test(cause)) {
    return `permission denied (${what} is mode 0600: run as the user that runs scalwsd)`;
  }
  return cause.replace(/^Error: /, "").split("\n")[0];
}
