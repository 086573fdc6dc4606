/**
 * Host lookup: exact names first, then single-label wildcards (`*.example.com` matches
 * `a.example.com`, not `a.b.example.com` nor `example.com`), then any-label wildcards
 * (`**.example.com` matches `a.example.com` and `a.b.example.com`, the longest suffix first).
 */

export class HostTable<T> {
  private readonly exact = new Map<string, T>();
  private readonly wildcard = new Map<string, T>();
  private readonly deep = new Map<string, T>();
  constructor(private readonly fallback: T | undefined = undefined) {}

  add(domain: string, value: T): void {
    if (domain.startsWith("**.")) this.deep.set(domain.slice(3), value);
    else if (domain.startsWith("*.")) this.wildcard.set(domain.slice(2), value);
    else this.exact.set(domain, value);
  }

  /** `host` must already be lower-cased and without port. */
  lookup(host: string): T | undefined {
    const hit = this.exact.get(host);
    if (hit !== undefined) return hit;
    const dot = host.indexOf(".");
    if (dot > 0) {
      const w = this.wildcard.get(host.slice(dot + 1));
      if (w !== undefined) return w;
      if (this.deep.size > 0) {
        for (let at = dot; at > 0; at = host.indexOf(".", at + 1)) {
          const d = this.deep.get(host.slice(at + 1));
          if (d !== undefined) return d;
        }
      }
    }
    return this.fallback;
  }
}

/**
 * The host name of a Host header value or URL authority: lower-cased, port removed, IPv6
 * brackets kept. Returns "" for an empty or malformed value.
 */
export function hostName(authority: string): string {
  if (authority.length === 0) return "";
  let end = authority.length;
  if (authority.charCodeAt(0) === 91) { // "[": IPv6 literal
    const close = authority.indexOf("]");
    if (close < 0) return "";
    end = close + 1;
    if (end < authority.length && authority.charCodeAt(end) !== 58) return "";
  } else {
    const colon = authority.indexOf(":");
    if (colon >= 0) end = colon;
  }
  const h = end === authority.length ? authority : authority.slice(0, end);
  for (let i = 0; i < h.length; i++) {
    const c = h.charCodeAt(i);
    if (c >= 65 && c <= 90) return h.toLowerCase();
    if (c <= 32 || c === 47 || c === 64) return ""; // space, "/" or "@": not a host
  }
  return h.endsWith(".") ? h.slice(0, -1) : h;
}
