/**
 * The client address after `trusted_proxies`: when the direct peer is trusted, the
 * `X-Forwarded-For` chain is walked from the right, skipping trusted hops; the first untrusted
 * address is the client.
 */
export function clientAddress(
  peer: string,
  headers: { get(name: string): string | null },
  trusted: (ip: string) => boolean,
): string {
  if (!trusted(peer)) return peer;
  const xff = headers.get("x-forwarded-for");
  if (xff === null) return peer;
  let end = xff.length;
  let client = peer;
  while (end > 0) {
    const comma = xff.lastIndexOf(",", end - 1);
    const hop = xff.slice(comma + 1, end).trim();
    end = comma < 0 ? 0 : comma;
    if (hop.length === 0) continue;
    client = hop;
    if (!trusted(hop)) break;
  }
  return client;
}
