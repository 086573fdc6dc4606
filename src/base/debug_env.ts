/**
 * Environment variables that Deno acts on by itself and that would open a surface scalwsd's
 * configuration does not show: `NODE_OPTIONS` with `--inspect` (Deno starts its inspector, a
 * debugger anyone on the host can use, before any of scalwsd's code runs), `SSLKEYLOGFILE` (every
 * TLS session's secrets written to that file, readable by all) and `DENO_SERVE_ADDRESS` (the
 * first `Deno.serve`, the admin socket or the loopback-only console listener, moved to any
 * address). {@linkcode dropDebugEnv} removes them before the SIGUSR1 guard re-executes the
 * process (`usr1.ts`): Deno reads them at start, so only the re-executed image is free of them.
 * The other options of `NODE_OPTIONS` are kept (supervised Node applications inherit them).
 *
 * That first image still opens the inspector for a moment, and `--inspect-brk` stops it before any
 * of scalwsd's code runs. So the `run` and `start` tasks start Deno without `NODE_OPTIONS` and hand
 * its value over in {@linkcode NODE_OPTIONS_HANDOFF}; it is taken back here, as if Deno had seen it.
 */

/** Where the `run` and `start` tasks (deno.json) put `NODE_OPTIONS`, out of Deno's sight. */
export const NODE_OPTIONS_HANDOFF = "SCALWS_NODE_OPTIONS";

/** Variables removed whole. */
const REMOVED = ["SSLKEYLOGFILE", "DENO_SERVE_ADDRESS"] as const;

/** `NODE_OPTIONS` words that open a debugger (`--inspect`, `--inspect-brk=...`, `--debug...`). */
const DEBUG_OPTION = /^--(inspect|debug)/;

/** One variable removed or changed: its name and what it would have opened. */
export interface DroppedEnv {
  readonly name: string;
  readonly reason: string;
}

/** Removes or trims the variables above in this process's environment; what it did. */
export function dropDebugEnv(): DroppedEnv[] {
  const out: DroppedEnv[] = [];
  try {
    for (const name of REMOVED) {
      if (Deno.env.get(name) === undefined) continue;
      Deno.env.delete(name);
      out.push({
        name,
        reason: name === "SSLKEYLOGFILE"
          ? "it makes Deno write every TLS session's secrets to a file"
          : "it moves Deno.serve's first listener (the admin API) to another address",
      });
    }
    const handed = Deno.env.get(NODE_OPTIONS_HANDOFF);
    if (handed !== undefined) {
      Deno.env.delete(NODE_OPTIONS_HANDOFF);
      if (handed.trim() !== "" && Deno.env.get("NODE_OPTIONS") === undefined) {
        Deno.env.set("NODE_OPTIONS", handed);
      }
    }
    const opts = Deno.env.get("NODE_OPTIONS");
    if (opts !== undefined) {
      const words = opts.split(/\s+/).filter((w) => w !== "");
      const kept: string[] = [];
      for (let i = 0; i < words.length; i++) {
        if (!DEBUG_OPTION.test(words[i])) kept.push(words[i]);
        else if (words[i] === "--inspect-port" || words[i] === "--debug-port") i++;
      }
      if (kept.length !== words.length) {
        if (kept.length === 0) Deno.env.delete("NODE_OPTIONS");
        else Deno.env.set("NODE_OPTIONS", kept.join(" "));
        out.push({ name: "NODE_OPTIONS", reason: "--inspect opens Deno's debugger" });
      }
    }
  } catch (err) {
    // Without --allow-env nothing can be read or changed: say so once.
    out.push({ name: "*", reason: `not checked: ${(err as Error).message}` });
  }
  return out;
}
