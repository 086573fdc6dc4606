/**
 * Renders the templates of `redirect.to` and header values for one request, from the parts
 * parsed at load (`config/parse_template.ts`).
 */
import { parseTemplate, type TemplatePart } from "../../config/mod.ts";
import type { Exchange } from "../exchange.ts";
import { hostName } from "../hosts.ts";

/** A compiled template: a constant string needs no work per request. */
export type Rendered = string | ((ex: Exchange) => string);

/** The value of one variable for `ex`. */
export function variable(ex: Exchange, name: string): string {
  switch (name) {
    case "host":
      return hostName(ex.authority);
    case "path":
      return ex.path;
    case "query":
      return ex.query;
    case "scheme":
      return ex.secure ? "https" : "http";
  }
  return "";
}

/** Compiles `text` (already checked at load). */
export function compileTemplate(text: string): Rendered {
  const parts = parseTemplate(text);
  if (typeof parts === "string") throw new Error(parts);
  if (parts.length === 1 && typeof parts[0] === "string") return parts[0];
  const list: readonly TemplatePart[] = parts;
  return (ex) => {
    let out = "";
    for (let i = 0; i < list.length; i++) {
      const p = list[i];
      out += typeof p === "string" ? p : "variable" in p ? variable(ex, p.variable) : "";
    }
    return out;
  };
}

/** The text of a compiled template for `ex`. */
export function render(t: Rendered, ex: Exchange): string {
  return typeof t === "string" ? t : t(ex);
}
