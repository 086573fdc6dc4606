/**
 * Headless Chromium for tests that look at a page as a person would: `--dump-dom` for the DOM
 * after scripts ran, `--screenshot` for a picture. Flags for a closed network (no background
 * calls home); every run is killed past its bound, so a stuck browser fails the test.
 */
import { outputWithin } from "./child_output.ts";

/** The Chromium binary, or undefined where none is installed (the tests are then ignored). */
export const CHROMIUM: string | undefined = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
  .find((p) => {
    try {
      return Deno.statSync(p).isFile;
    } catch {
      return false;
    }
  });

/** Headless Chromium flags for a closed network, with the profile in `profile`. */
export function chromiumArgs(profile: string, ...extra: string[]): string[] {
  return [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    `--user-data-dir=${profile}`,
    ...extra,
  ];
}

/** Runs Chromium with `args` (see `chromiumArgs`); its stdout. Killed after `timeoutMs`. */
export async function runChromium(args: string[], timeoutMs = 60_000): Promise<string> {
  if (CHROMIUM === undefined) throw new Error("no chromium installed");
  const child = new Deno.Command(CHROMIUM, {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const { out, killed } = await outputWithin(child, timeoutMs);
  if (killed) throw new Error(`chromium ran more than ${timeoutMs} ms: ${args.at(-1)}`);
  return new TextDecoder().decode(out.stdout);
}

/**
 * The DOM of `url` once its scripts ran for `budgetMs` of virtual time; with `shot`, the same
 * launch also writes a screenshot at `shot.size` ("width,height") into `shot.file` (one
 * Chromium start instead of two).
 */
export function dumpDom(
  profile: string,
  url: string,
  budgetMs = 3000,
  shot?: { size: string; file: string },
): Promise<string> {
  const extra = shot === undefined
    ? []
    : [`--window-size=${shot.size}`, `--screenshot=${shot.file}`];
  return runChromium(
    chromiumArgs(profile, `--virtual-time-budget=${budgetMs}`, ...extra, "--dump-dom", url),
  );
}

/** A screenshot of `url` at `size` ("width,height") into `file`. */
export async function screenshot(
  profile: string,
  url: string,
  size: string,
  file: string,
): Promise<void> {
  await runChromium(
    chromiumArgs(
      profile,
      "--virtual-time-budget=3000",
      `--window-size=${size}`,
      `--screenshot=${file}`,
      url,
    ),
  );
}
