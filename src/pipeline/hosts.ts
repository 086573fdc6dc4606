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
 * brackets kept. Returns "" for an empty or malformed value: a name of other bytes than
 * letters, digits, `-`, `.` and `_`, an IPv6 literal of other bytes than hex digits, `:` and
 * `.`, or a port that is not digits (`a.test?x`, `a.test/x`, `u@a.test`, `a.test:abc`).
 */
export function hostName(authority: string): string {
  if (authority.length === 0) return "";
  let end: number;
  if (authority.charCodeAt(0) === 91) { // "[": IPv6 literal
    const close = authority.indexOf("]");
    if (close < 2) return "";
    for (let i = 1; i < close; i++) {
      const c = authority.charCodeAt(i) | 0x20;
      if (!((c >= 48 && c <= 58) || (c >= 97 && c <= 102) || c === 46)) return "";
    }
    end = close + 1;
  } else {
    const colon = authority.indexOf(":");
    end = colon >= 0 ? colon : authority.length;
    if (end === 0) return "";
  }
  if (end < authority.length) {
    if (authority.charCodeAt(end) !== 58) return "";
    for (let i = end + 1; i < authority.length; i++) {
      const c = authority.charCodeAt(i);
      if (c < 48 || c > 57) return "";
    }
  }
  const h = end === authority.length ? authority : authority.slice(0, end);
  let upper = false;
  if (h.charCodeAt(0) !== 91) {
    for (let i = 0; i < h.length; i++) {
      const c = h.charCodeAt(i);
      if (c >= 65 && c <= 90) upper = true;
      else if (
        !((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 46 || c === 95)
      ) {
        return "";
      }
    }
  } else upper = /[A-F]/.test(h);
  const name = upper ? h.toLowerCase() : h;
  return name.endsWith(".") ? name.slice(0, -1) : name;
}
