/** Parses `addr[=weight]`; the weight must be an integer (the server checks its range). */
export function parseMemberArg(arg: string): { address: string; weight?: number } | string {
  const eq = arg.lastIndexOf("=");
  if (eq < 0) return { address: arg };
  const w = arg.slice(eq + 1);
  if (!/^\d+$/.test(w)) {
    return `invalid weight in "${arg}": expected ADDR=WEIGHT with an integer weight`;
  }
  return { address: arg.slice(0, eq), weight: Number(w) };
}
