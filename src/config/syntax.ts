/**
 * Lexical rules for configuration strings: names, HTTP tokens, host names, domains, paths.
 * Each checker returns an error message, or undefined when the text is fine.
 */

import { decodeUnreserved } from "../base/mod.ts";

/**
 * Pool, tenant, application and listener names: 1 to 63 characters of `a-z`, `0-9`, `_` and
 * `-`, starting with a letter or a digit (`^[a-z0-9][a-z0-9_-]{0,62}$`). They appear in
 * metric labels, cookie names and admin API paths, so they need no escaping anywhere.
 */
export const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export function nameError(text: string): string | undefined {
  return NAME_PATTERN.test(text) ? undefined : `invalid name "${text}": use 1 to 63 characters ` +
    `a-z, 0-9, "_" and "-", starting with a letter or digit`;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** RFC 9110 token: what a header or cookie name may contain. */
export function tokenError(text: string): string | undefined {
  return TOKEN.test(text) ? undefined : `invalid name "${text}": must be an HTTP token`;
}

// Member host labels also allow `_`: Docker Compose service names resolve with it.
const HOST_LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;
const DOMAIN_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const NUMERIC = /^[0-9]+$/;

/**
 * A DNS host name of a member or upstream, already lower-cased: labels of `a-z`, `0-9`, `_`
 * and `-` (not at either end), at most 253 characters, one trailing dot allowed. A name whose
 * last label is all digits is refused, since it is a mistyped IPv4 address.
 */
export function hostnameError(host: string): string | undefined {
  const name = host.endsWith(".") ? host.slice(0, -1) : host;
  if (name.length === 0 || name.length > 253) return `invalid host name "${host}"`;
  const labels = name.split(".");
  for (const label of labels) {
    if (!HOST_LABEL.test(label)) return `invalid host name "${host}"`;
  }
  if (NUMERIC.test(labels[labels.length - 1])) return `invalid IPv4 address "${host}"`;
  return undefined;
}

/**
 * An application domain, already lower-cased: a host name of `a-z`, `0-9` and `-` labels, or
 * `*.` followed by one, a wildcard for exactly one more label. No port, no trailing dot.
 */
export function domainError(domain: string): string | undefined {
  const name = domain.startsWith("*.") ? domain.slice(2) : domain;
  if (name.length === 0 || name.length > 253) return `invalid domain "${domain}"`;
  for (const label of name.split(".")) {
    if (!DOMAIN_LABEL.test(label)) {
      return label.includes("*")
        ? `invalid domain "${domain}": a wildcard is only allowed as a leading "*."`
        : `invalid domain "${domain}"`;
    }
  }
  return undefined;
}

// No controls, spaces, query or fragment in a route prefix.
const PATH_CHARS = /^[\x21-\x7e]*$/;

/**
 * Normalises a route path: it must start with `/`; percent-encoded unreserved characters are
 * decoded, repeated slashes collapse to one and a trailing slash is removed (except for `/`). `.` and `..` segments, `?`, `#`,
 * spaces and control characters are refused. Returns the path or an error message.
 */
export function normaliseRoutePath(path: string): { path?: string; error?: string } {
  if (!path.startsWith("/")) return { error: `invalid path "${path}": must start with "/"` };
  if (!PATH_CHARS.test(path) || path.includes("?") || path.includes("#")) {
    return { error: `invalid path "${path}": no spaces, "?" or "#" allowed` };
  }
  // As requests are: percent-encoded unreserved characters decoded (`/%7Eu` is `/~u`).
  const segments = decodeUnreserved(path).split("/").filter((s) => s !== "");
  if (segments.some((s) => s === "." || s === "..")) {
    return { error: `invalid path "${path}": "." and ".." segments are not allowed` };
  }
  return { path: "/" + segments.join("/") };
}

const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** A header value must not contain CR, LF, NUL or other controls except tab. */
export function headerValueError(value: string): string | undefined {
  return HEADER_VALUE.test(value) ? undefined : "invalid header value: control characters";
}
