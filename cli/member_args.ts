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

/** Parses every `addr[=weight]` argument; the first bad one's message instead. */
export function parseMemberArgs(
  args: readonly string[],
): { address: string; weight?: number }[] | string {
  const members = [];
  for (const a of args) {
    const m = parseMemberArg(a);
    if (typeof m === "string") return m;
    members.push(m);
  }
  return members;
}
