/**
 * Listen addresses, member addresses and single-upstream URLs, parsed into the shapes of
 * `types.ts`, with the canonical member text used as the member's registry key.
 */
import { ValueError } from "./errors.ts";
import { isLoopback, type MemberAddress, parseIP, parseIPv4 } from "../net/mod.ts";
import { hostnameError } from "./syntax.ts";
import type { AddressTarget, HostPort } from "./types.ts";

const PORT = /^[0-9]{1,5}$/;
const IPV4_LIKE = /^[0-9.]+$/;

interface SplitHost {
  /** Lower-cased; IPv6 in canonical text without brackets. */
  readonly hostname: string;
  readonly ipv6: boolean;
  readonly ip: boolean;
  readonly port?: number;
}

/** `[v6]:port`, `v4:port`, `host:port`, or any of them without the port. */
function splitHostPort(
  text: string,
  what: string,
  minPort: number,
  shown: string = text,
): SplitHost {
  let host: string;
  let port: string | undefined;
  let bracketed = false;
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    if (close === -1) throw new ValueError(`invalid ${what} "${shown}": missing "]"`);
    host = text.slice(1, close);
    bracketed = true;
    const rest = text.slice(close + 1);
    if (rest !== "") {
      if (!rest.startsWith(":")) throw new ValueError(`invalid ${what} "${shown}"`);
      port = rest.slice(1);
    }
  } else {
    const colon = text.lastIndexOf(":");
    host = colon === -1 ? text : text.slice(0, colon);
    if (colon !== -1) port = text.slice(colon + 1);
    if (host.includes(":")) {
      throw new ValueError(`invalid ${what} "${shown}": an IPv6 address must be in brackets`);
    }
  }
  let portNumber: number | undefined;
  if (port !== undefined) {
    portNumber = PORT.test(port) ? Number(port) : NaN;
    if (!(portNumber >= minPort && portNumber <= 65535)) {
      throw new ValueError(
        `invalid ${what} "${shown}": port must be between ${minPort} and 65535`,
      );
    }
  }
  if (host === "") throw new ValueError(`invalid ${what} "${shown}": host is missing`);
  if (bracketed) {
    const ip = host.includes(":") ? parseIP(host) : undefined;
    if (ip === undefined) {
      throw new ValueError(`invalid ${what} "${shown}": invalid IPv6 address "${host}"`);
    }
    return { hostname: ip.text, ipv6: true, ip: true, port: portNumber };
  }
  if (IPV4_LIKE.test(host)) {
    if (parseIPv4(host) === undefined) {
      throw new ValueError(`invalid ${what} "${shown}": invalid IPv4 address "${host}"`);
    }
    return { hostname: host, ipv6: false, ip: true, port: portNumber };
  }
  const lower = host.toLowerCase();
  const error = hostnameError(lower);
  if (error !== undefined) throw new ValueError(`invalid ${what} "${shown}": ${error}`);
  return { hostname: lower, ipv6: false, ip: false, port: portNumber };
}

function bracket(split: SplitHost): string {
  return split.ipv6 ? `[${split.hostname}]` : split.hostname;
}

/**
 * Parses a listen address: `127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:80`, `localhost:8080`.
 * The port is required, 0..65535 (0: the system picks one); the host must be an IP address or
 * `localhost`. Throws a `ValueError`.
 */
export function parseListenAddress(text: string): HostPort {
  const split = splitHostPort(text, "address", 0);
  if (split.port === undefined) throw new ValueError(`invalid address "${text}": port is required`);
  if (!split.ip && split.hostname !== "localhost") {
    throw new ValueError(`invalid address "${text}": host must be an IP address or localhost`);
  }
  return { hostname: split.hostname, port: split.port };
}

/**
 * Parses `server.resolver`: `127.0.0.1:5353`, `[::1]:53`, or an IP address alone (`::1`,
 * port 53).
 * The host must be an IP address. Throws a `ValueError`.
 */
export function parseResolverAddress(text: string): HostPort {
  const bare = parseIP(text);
  if (bare !== undefined) return { hostname: bare.text, port: 53 };
  const split = splitHostPort(text, "resolver", 1);
  if (!split.ip) throw new ValueError(`invalid resolver "${text}": host must be an IP address`);
  return { hostname: split.hostname, port: split.port ?? 53 };
}

/** True for a listen address on 127.0.0.0/8, `::1` or `localhost`. */
export function isLoopbackAddress(address: HostPort): boolean {
  if (address.hostname === "localhost") return true;
  const ip = parseIP(address.hostname);
  return ip !== undefined && isLoopback(ip);
}

function unixAddress(text: string, what: string): MemberAddress {
  const path = text.slice(5);
  if (!path.startsWith("/")) {
    throw new ValueError(`invalid ${what} "${text}": the socket path must be absolute`);
  }
  if (path.includes("\0")) throw new ValueError(`invalid ${what} "${text}"`);
  return { kind: "unix", path, canonical: text };
}

/**
 * Parses a pool member address: `192.0.2.5:8080`, `[2001:db8::5]:8080`, `api-1.internal:8080`
 * (resolved at connect time) or `unix:/absolute/path`. The port is required (1..65535); a
 * scheme or a path is refused. `canonical` has IPv6 in RFC 5952 form in brackets
 * (`[2001:DB8:0::5]:8080` -> `[2001:db8::5]:8080`, IPv4-mapped as `[::ffff:192.0.2.5]`) and
 * host names lower-cased. Throws a `ValueError`.
 */
export function parseMemberAddress(text: string): MemberAddress {
  if (text.startsWith("unix:")) return unixAddress(text, "address");
  const scheme = text.indexOf("://");
  if (scheme !== -1) {
    throw new ValueError(
      `invalid address "${text}": a member address has no scheme, write "${
        text.slice(scheme + 3)
      }"`,
    );
  }
  if (text.includes("/")) {
    throw new ValueError(`invalid address "${text}": a member address has no path`);
  }
  const split = splitHostPort(text, "address", 1);
  if (split.port === undefined) throw new ValueError(`invalid address "${text}": port is required`);
  return {
    kind: "tcp",
    hostname: split.hostname,
    port: split.port,
    canonical: `${bracket(split)}:${split.port}`,
  };
}

const URL_SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;

/**
 * Parses the single-address `upstream` of a proxy runtime: `http://host[:port]`,
 * `https://host[:port]` (default ports 80 and 443) or `unix:/absolute/path` (plain HTTP).
 * A path other than `/`, a query, a fragment or user information is refused. `url` is the
 * canonical `scheme://authority`; `authority` (the Host sent when `preserve_host` is false)
 * omits a default port and is `localhost` for a Unix socket. Throws a `ValueError`.
 */
export function parseUpstreamUrl(text: string): AddressTarget {
  if (text.startsWith("unix:")) {
    const address = unixAddress(text, "upstream");
    return { kind: "address", url: text, scheme: "http", address, authority: "localhost" };
  }
  const m = URL_SCHEME.exec(text);
  if (m === null) {
    throw new ValueError(`invalid upstream "${text}": must start with http://, https:// or unix:`);
  }
  const scheme = m[1].toLowerCase();
  if (scheme !== "http" && scheme !== "https") {
    throw new ValueError(
      `invalid upstream "${text}": unsupported scheme "${m[1]}", use http://, https:// or unix:`,
    );
  }
  const rest = text.slice(m[0].length);
  const end = rest.search(/[/?#]/);
  const authorityText = end === -1 ? rest : rest.slice(0, end);
  const tail = end === -1 ? "" : rest.slice(end);
  if (tail !== "" && tail !== "/") {
    throw new ValueError(
      tail.startsWith("/")
        ? `invalid upstream "${text}": a path is not allowed`
        : `invalid upstream "${text}": a query or fragment is not allowed`,
    );
  }
  if (authorityText.includes("@")) {
    throw new ValueError(`invalid upstream "${text}": user information is not allowed`);
  }
  const split = splitHostPort(authorityText, "upstream", 1, text);
  const defaultPort = scheme === "https" ? 443 : 80;
  const port = split.port ?? defaultPort;
  const host = bracket(split);
  const authority = port === defaultPort ? host : `${host}:${port}`;
  return {
    kind: "address",
    url: `${scheme}://${authority}`,
    scheme,
    address: { kind: "tcp", hostname: split.hostname, port, canonical: `${host}:${port}` },
    authority,
  };
}
