/** Loopback ports for tests that must name one before a server binds it. */

/** A port free on 127.0.0.1 right now (another process may take it before the test does). */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}
