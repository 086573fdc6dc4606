/**
 * `scalwsd check --config FILE`, like `nginx -t`: loads the file as a start would and prints
 * every problem as `FILE:LINE:COLUMN: PATH: MESSAGE` (exit 1), or its warnings and `ok` (exit 0).
 */
import { ConfigError, loadConfig, type LoadFiles, placeProblems } from "../src/config/mod.ts";
import {
  affinityKeyProblem,
  openFilesCheck,
  preflight,
  storedListWarnings,
} from "../src/server/mod.ts";

/** What `scalwsd check` finds in a file: error lines (none: the file is ok) and warning lines. */
export interface CheckResult {
  readonly errors: readonly string[];
  readonly warnings: readonly string[];
}

/**
 * Loads and preflights `file` as `scalwsd check` does; every line names the file, and the line
 * and column where they are known. `io` replaces how files are looked at (tests of examples that
 * describe another machine's directories).
 */
export async function checkFile(file: string, io: LoadFiles = {}): Promise<CheckResult> {
  try {
    const loaded = await loadConfig(file, io);
    const problems = preflight(loaded.config);
    const keyProblem = affinityKeyProblem(loaded.config);
    if (keyProblem !== undefined) problems.push(keyProblem);
    if (problems.length > 0) return { errors: placeProblems(loaded, problems), warnings: [] };
    const files = openFilesCheck(loaded.config);
    const warnings = [
      ...loaded.warnings,
      ...(files === null ? [] : [files]),
      ...await storedListWarnings(loaded.config),
    ];
    return { errors: [], warnings: placeProblems(loaded, warnings, "warning: ") };
  } catch (err) {
    if (err instanceof ConfigError) return { errors: err.lines, warnings: [] };
    return { errors: [`${file}: ${(err as Error).message ?? err}`], warnings: [] };
  }
}

/** `scalwsd check --config FILE`: prints every error and exits 1, or prints `ok` and exits 0. */
export async function check(file: string): Promise<number> {
  const { errors, warnings } = await checkFile(file);
  for (const e of errors) console.error(e);
  if (errors.length > 0) return 1;
  for (const w of warnings) console.error(w);
  console.log("ok");
  return 0;
}
