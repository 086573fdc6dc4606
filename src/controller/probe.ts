/**
 * Observation of instances: `/readyz` and `/metrics` over loopback from each instance's
 * metrics listener, and admin API calls over its Unix socket. Every call is bounded by a
 * timeout; an unreachable instance is `null`, never an exception.
 */

/** What `/readyz` says. */
export interface Readiness {
  /** The generation the process serves (it starts at the configuration generation it was given). */
  readonly generation: number;
  readonly state: string;
}

/** GETs `http://ADDRESS/readyz`; null when unreachable or not JSON. */
export async function probeReady(address: string, timeoutMs: number): Promise<Readiness | null> {
  try {
    const res = await fetch(`http://${address}/readyz`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = await res.json() as Partial<Readiness>;
    if (typeof body.state !== "string" || typeof body.generation !== "number") return null;
    return { generation: body.generation, state: body.state };
  } catch {
    return null;
  }
}

/** GETs `http://ADDRESS/metrics`; null when unreachable. */
export async function scrapeMetrics(address: string, timeoutMs: number): Promise<string | null> {
  try {
    const res = await fetch(`http://${address}/metrics`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    return res.ok ? text : null;
  } catch {
    return null;
  }
}

/** One request to an instance's admin socket; the status and body as received. */
export interface AdminRequest {
  readonly method: string;
  readonly path: string;
  readonly timeoutMs: number;
  /** Sent as `application/json`. */
  readonly body?: string;
  /** More request headers. */
  readonly headers?: Readonly<Record<string, string>>;
}

export async function adminRequest(
  socket: string,
  req: AdminRequest,
): Promise<{ status: number; body: string }> {
  const { method, path, timeoutMs, body, headers: extra = {} } = req;
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
  try {
    const res = await fetch(`http://localhost${path}`, {
      client,
      method,
      body,
      headers: body === undefined ? extra : { "content-type": "application/json", ...extra },
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: res.status, body: await res.text() };
  } finally {
    client.close();
  }
}
