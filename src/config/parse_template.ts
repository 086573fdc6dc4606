/**
 * Templates of `redirect.to` and header values: text with `$host`, `$path`, `$query` and
 * `$scheme`, and `$$` for a literal `$`. `rewrite.regex.to` uses `$1`..`$9` instead. Parsed
 * once at load into parts; the request path only concatenates.
 */

/** The variables a template may use. */
export const VARIABLES = ["host", "path", "query", "scheme"] as const;
export type Variable = typeof VARIABLES[number];

/** A literal string, a variable, or a capture group number (1..9). */
export type TemplatePart = string | { readonly variable: Variable } | { readonly group: number };

/**
 * Parses `text`; `groups` is the number of capture groups `$N` may name (0: none allowed, and
 * then `$host`... are allowed instead). Returns the parts or an error message.
 */
export function parseTemplate(text: string, groups = -1): TemplatePart[] | string {
  const parts: TemplatePart[] = [];
  let literal = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== "$") {
      literal += c;
      continue;
    }
    const next = text[i + 1];
    if (next === "$") {
      literal += "$";
      i++;
      continue;
    }
    if (groups >= 0 && next !== undefined && next >= "0" && next <= "9") {
      const n = Number(next);
      if (n < 1 || n > groups) {
        return `$${n} names no group; the pattern has ${groups} capture group${
          groups === 1 ? "" : "s"
        }`;
      }
      if (literal !== "") parts.push(literal);
      literal = "";
      parts.push({ group: n });
      i++;
      continue;
    }
    const m = /^[a-z_]+/.exec(text.slice(i + 1));
    const name = m?.[0] ?? "";
    if (groups < 0 && (VARIABLES as readonly string[]).includes(name)) {
      if (literal !== "") parts.push(literal);
      literal = "";
      parts.push({ variable: name as Variable });
      i += name.length;
      continue;
    }
    return groups >= 0
      ? `unknown reference "$${name || (next ?? "")}"; use $1 to $9 (and $$ for "$")`
      : `unknown variable "$${name || (next ?? "")}"; use $host, $path, $query, $scheme ` +
        `(and $$ for "$")`;
  }
  if (literal !== "" || parts.length === 0) parts.push(literal);
  return parts;
}
