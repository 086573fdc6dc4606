/**
 * `rewrite`: changes the path the handler sees (and the member receives), once; the request is
 * not routed again, so a rewrite cannot loop. The result is normalised again (`.`/`..`
 * resolved, never above `/`). The query string is kept.
 */
import { parseTemplate, type TemplatePart } from "../../config/template.ts";
import { MAX_SUBJECT } from "../../config/regex_safety.ts";
import type { RewritePolicy } from "../../config/types.ts";
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

/** A compiled `regex` rewrite: the pattern is compiled once, here. */
export class RegexRewrite {
  private readonly re: RegExp;
  private readonly parts: readonly TemplatePart[];
  constructor(match: string, to: string) {
    this.re = new RegExp(match);
    const parts = parseTemplate(to, 9);
    if (typeof parts === "string") throw new Error(parts);
    this.parts = parts;
  }

  /** The rewritten path, or null when the pattern does not match. */
  apply(path: string): string | null {
    const m = this.re.exec(path);
    if (m === null) return null;
    let out = "";
    for (const p of this.parts) {
      out += typeof p === "string" ? p : "group" in p ? (m[p.group] ?? "") : "";
    }
    return out;
  }
}

export function rewritePolicy(cfg: RewritePolicy): Policy {
  if ("strip_prefix" in cfg) {
    const prefix = cfg.strip_prefix;
    return {
      name: "rewrite",
      request(ex: Exchange) {
        ex.path = stripPrefix(ex.path, prefix);
        return null;
      },
    };
  }
  if ("prefix" in cfg) {
    const { from, to } = cfg.prefix;
    return {
      name: "rewrite",
      request(ex: Exchange) {
        ex.path = replacePrefix(ex.path, from, to);
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
      const out = rx.apply(ex.path);
      if (out !== null) ex.path = normalizePath(out);
      return null;
    },
  };
}
