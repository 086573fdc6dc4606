/**
 * `rewrite`: changes the path the handler sees (and the member receives), once; the request is
 * not routed again, so a rewrite cannot loop. The result is normalised again (`.`/`..`
 * resolved, never above `/`). The query string is kept, except that a `regex` target with `?`
 * sets it (see `RegexRewrite`).
 */
import {
  MAX_SUBJECT,
  parseTemplate,
  type RewritePolicy,
  type TemplatePart,
} from "../../config/mod.ts";
import type { Exchange } from "../exchange.ts";
import { normalizePath } from "../path.ts";
import { answer, type Policy } from "./policy.ts";

/** Whether `prefix` is a segment-aligned prefix of `path`. */
function under(path: string, prefix: string): boolean {
  return path.startsWith(prefix) &&
    (path.length === prefix.length || path.charCodeAt(prefix.length) === 47);
}

/** The path after `strip_prefix` (unchanged when the prefix does not apply). */
export function stripPrefix(path: string, prefix: string): string {
  if (!under(path, prefix)) return path;
  return path.length === prefix.length ? "/" : path.slice(prefix.length);
}

/** The path after `prefix: {from, to}` (unchanged when `from` does not apply). */
export function replacePrefix(path: string, from: string, to: string): string {
  if (from === "/") return normalizePath(to + path);
  if (!under(path, from)) return path;
  const rest = path.slice(from.length);
  return to === "/" ? (rest === "" ? "/" : rest) : to + rest;
}

/**
 * A capture copied into the query: `&` and `+` would split or change an argument, so they are
 * escaped (the path is still percent-encoded, so `%` already is an escape and stays).
 */
function escapeArg(value: string): string {
  if (value.indexOf("&") < 0 && value.indexOf("+") < 0) return value;
  return value.replaceAll("&", "%26").replaceAll("+", "%2B");
}

/**
 * A compiled `regex` rewrite: the pattern is compiled once, here. A target with `?` sets the
 * query (nginx's rule): the request's own query is appended after the new one, joined with
 * `&`, unless the target ends with `?`. A target without `?` keeps the query.
 */
export class RegexRewrite {
  private readonly re: RegExp;
  private readonly parts: readonly TemplatePart[];
  /** The target has a `?`: it sets the query. */
  private readonly setsQuery: boolean;
  /** The target ends with `?`: the request's query is not appended. */
  private readonly dropsQuery: boolean;

  constructor(match: string, to: string) {
    this.re = new RegExp(match);
    this.dropsQuery = to.endsWith("?");
    const template = this.dropsQuery ? to.slice(0, -1) : to;
    this.setsQuery = this.dropsQuery || template.includes("?");
    const parts = parseTemplate(template, 9);
    if (typeof parts === "string") throw new Error(parts);
    this.parts = parts;
  }

  /** The rewritten path (`?` and what follows included), or null when it does not match. */
  apply(path: string): string | null {
    const m = this.re.exec(path);
    if (m === null) return null;
    let out = "";
    let inQuery = false;
    for (const p of this.parts) {
      if (typeof p === "string") {
        out += p;
        if (!inQuery && p.includes("?")) inQuery = true;
      } else if ("group" in p) {
        const v = m[p.group] ?? "";
        out += inQuery ? escapeArg(v) : v;
      }
    }
    return out;
  }

  /**
   * Rewrites the exchange's path, and its query when the target sets one; false when the
   * pattern does not match.
   */
  rewrite(ex: Exchange): boolean {
    const out = this.apply(ex.path);
    if (out === null) return false;
    if (!this.setsQuery) {
      ex.rewrite(normalizePath(out));
      return true;
    }
    const q = out.indexOf("?");
    const args = q < 0 ? "" : out.slice(q + 1);
    ex.rewrite(
      normalizePath(q < 0 ? out : out.slice(0, q)),
      joinQuery(args, this.dropsQuery ? "" : ex.query),
    );
    return true;
  }
}

/** `?args&original` (`original` is `?...` or ""), as nginx joins a rewrite's arguments. */
export function joinQuery(args: string, original: string): string {
  if (original.length <= 1) return args === "" ? "" : "?" + args;
  return args === "" ? original : "?" + args + "&" + original.slice(1);
}

export function rewritePolicy(cfg: RewritePolicy): Policy {
  if ("strip_prefix" in cfg) {
    const prefix = cfg.strip_prefix;
    return {
      name: "rewrite",
      request(ex: Exchange) {
        ex.rewrite(stripPrefix(ex.path, prefix));
        return null;
      },
    };
  }
  if ("prefix" in cfg) {
    const { from, to } = cfg.prefix;
    return {
      name: "rewrite",
      request(ex: Exchange) {
        ex.rewrite(replacePrefix(ex.path, from, to));
        return null;
      },
    };
  }
  const rx = new RegexRewrite(cfg.regex.match, cfg.regex.to);
  return {
    name: "rewrite",
    request(ex: Exchange) {
      // The pattern may be quadratic in the subject: long paths are not run through it.
      if (ex.path.length > MAX_SUBJECT) return answer(ex, 414, "URI Too Long");
      rx.rewrite(ex);
      return null;
    },
  };
}
