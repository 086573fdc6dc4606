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
  try {
    await Deno.stat(socket);
  } catch {
    throw new SocketCallError(`cannot reach ${what} ${socket}: no such file (${hint})`);
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
      throw new SocketCallError(`cannot reach ${what} ${socket}: ${(err as Error).message}`);
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
