/**
 * The body of `POST /v1/cache/purge`: `{"host": "...", "path": "/x"}` (one path, every query
 * and variant), `{"host": "...", "prefix": "/img/"}` or `{"all": true}`. Anything else is
 * refused with a message naming the field.
 */
import type { PurgeTarget } from "./store.ts";

const HOST =
  /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*(?::[0-9]{1,5})?$|^\[[0-9a-f:.]+\](?::[0-9]{1,5})?$/;

/** The purge `body` asks for, or an error message naming the field. */
export function parsePurge(body: unknown): PurgeTarget | string {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return 'body: must be an object: {"host", "path"}, {"host", "prefix"} or {"all": true}';
  }
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) {
    if (k !== "host" && k !== "path" && k !== "prefix" && k !== "all") return `${k}: unknown field`;
  }
  if ("all" in b) {
    if (b.all !== true) return "all: must be true";
    if ("host" in b || "path" in b || "prefix" in b) {
      return "all: cannot be combined with host, path or prefix";
    }
    return { all: true };
  }
  if (!("host" in b)) return "host: is required";
  if (typeof b.host !== "string" || b.host === "") return "host: must be a non-empty string";
  const host = b.host.toLowerCase();
  if (!HOST.test(host)) return `host: invalid host "${b.host}"`;
  if ("path" in b && "prefix" in b) return "path: give path or prefix, not both";
  if ("path" in b) {
    if (typeof b.path !== "string" || !b.path.startsWith("/")) return 'path: must start with "/"';
    return { host, path: b.path };
  }
  if ("prefix" in b) {
    if (typeof b.prefix !== "string" || !b.prefix.startsWith("/")) {
      return 'prefix: must start with "/"';
    }
    return { host, prefix: b.prefix };
  }
  return "path: is required (or prefix)";
}

/**
 * `{"host","path"}` or `{"host","prefix"}` of a URL given to `scalwsd ctl cache purge`; a
 * URL with a query purges that URL only, without one every query of the path.
 */
export function purgeOfUrl(url: string, prefix: boolean): PurgeTarget | string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `invalid URL "${url}": expected http://host/path`;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    return `invalid URL "${url}": expected http://host/path`;
  }
  return prefix
    ? { host: u.host, prefix: u.pathname }
    : { host: u.host, path: u.pathname + u.search };
}

/**
 * What `scalwsd ctl cache purge` was given (its words after `cache purge` and `--all`,
 * `--prefix`): the purge body, or the usage line when the words do not make one.
 */
export function purgeOfArgs(
  words: readonly string[],
  flags: { readonly all?: unknown; readonly prefix?: unknown },
): { all: true } | PurgeTarget | string {
  if (flags.all === true) return words.length === 0 ? { all: true } : PURGE_USAGE;
  return words.length === 1 ? purgeOfUrl(words[0], flags.prefix === true) : PURGE_USAGE;
}

const PURGE_USAGE = "expected: cache purge URL | cache purge --prefix URL | cache purge --all";
