/**
 * `Accept-Encoding` negotiation (RFC 9110 12.5.3): the offered coding with the highest q-value
 * wins, ties go to the configured order; `*` stands for codings not named; `q=0` refuses.
 */

/** The coding of `offered` to use for `header`, or null for none (identity). */
export function negotiate(header: string | null, offered: readonly string[]): string | null {
  if (header === null || header === "") return null;
  const q = new Map<string, number>();
  let star = -1;
  for (const part of header.split(",")) {
    const semi = part.indexOf(";");
    const coding = (semi < 0 ? part : part.slice(0, semi)).trim().toLowerCase();
    if (coding === "") continue;
    let value = 1;
    if (semi >= 0) {
      const m = /(?:^|;)\s*q\s*=\s*([^;\s]*)/i.exec(part.slice(semi));
      if (m !== null) {
        value = Number(m[1]);
        if (!/^[0-9.]+$/.test(m[1]) || !(value >= 0 && value <= 1)) value = 0;
      }
    }
    if (coding === "*") star = value;
    else q.set(coding === "x-gzip" ? "gzip" : coding, value);
  }
  let best: string | null = null;
  let bestQ = 0;
  for (const c of offered) {
    const v = q.get(c) ?? (star >= 0 ? star : 0);
    if (v > bestQ) {
      best = c;
      bestQ = v;
    }
  }
  return best;
}
