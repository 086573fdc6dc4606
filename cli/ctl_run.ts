/**
 * How one `scalwsd ctl` command runs, against an instance's admin socket or a controller's:
 * its answer printed as JSON (`--json`) or text, exit 0; arguments it refuses, exit 2 with the
 * reason; a socket call refused or unreachable, exit 1; a command it does not know, exit 2
 * with the usage.
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
  console.error(`scalwsd ctl: unknown command "${p.join(" ")}"\n${o.usage}`);
  return 2;
}
