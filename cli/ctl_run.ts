/**
 * How one `scalwsd ctl` command runs, against an instance's admin socket or a controller's:
 * its answer printed as JSON (`--json`) or text, exit 0; arguments it refuses, exit 2 with the
 * reason; a socket call refused or unreachable, exit 1; a known command whose arguments do not
 * fit, exit 2 with its forms; a command it does not know, exit 2 with the usage.
 */
import { SocketCallError } from "./socket_call.ts";

/** Prints an answer: `data` as JSON with `--json`, else the text `text()` makes of it. */
export type CtlOut = (data: unknown, text: () => string) => void;

/** Arguments a command refuses; `message` is printed, and the exit status is 2. */
export class CtlArgsError extends Error {}

/** `value`, or a `CtlArgsError` with the message a parser returned instead. */
export function argsOrRefuse<T>(value: T | string): T {
  if (typeof value === "string") throw new CtlArgsError(value);
  return value;
}

/**
 * Runs command `p`: `run` prints through `out` and answers true, or false when it knows no such
 * command. Returns the exit status.
 */
export async function runCtl(
  p: readonly string[],
  o: { readonly json: boolean; readonly usage: string },
  run: (out: CtlOut) => Promise<boolean>,
): Promise<number> {
  const out: CtlOut = (data, text) => console.log(o.json ? JSON.stringify(data, null, 2) : text());
  try {
    if (await run(out)) return 0;
  } catch (err) {
    if (err instanceof SocketCallError || err instanceof CtlArgsError) {
      console.error(`scalwsd ctl: ${err.message}`);
      return err instanceof CtlArgsError ? 2 : 1;
    }
    throw err;
  }
  const forms = formsOf(p, o.usage);
  if (forms.length > 0) {
    console.error(`scalwsd ctl: "${p.join(" ")}" does not fit; use ${forms.join(" or ")}`);
    return 2;
  }
  console.error(`scalwsd ctl: unknown command "${p.join(" ")}"\n${o.usage}`);
  return 2;
}

/**
 * The usage's forms of the command `p` names with arguments that do not fit it (`upstreams set`
 * without a pool: `upstreams set NAME ADDR[=WEIGHT]...`), matched on its first two words;
 * none for a command the usage does not have.
 */
export function formsOf(p: readonly string[], usage: string): string[] {
  if (p.length === 0) return [];
  // The first section only: an instance's usage goes on with the controller's (" or: ...").
  const all = usage.split("\n").slice(1).map((l) => l.trim());
  const end = all.findIndex((l) => l.startsWith("or:"));
  const lines = [...new Set(all.slice(0, end < 0 ? all.length : end))].map((l) =>
    l.split(/\s{2,}/)[0]
  );
  for (const n of [Math.min(p.length, 2), 1]) {
    const head = p.slice(0, n).join(" ");
    const found = lines.filter((l) => l === head || l.startsWith(`${head} `));
    if (found.length > 0) return found;
  }
  return [];
}
