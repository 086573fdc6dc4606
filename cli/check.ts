import { ConfigError } from "../src/config/errors.ts";
import { loadConfig } from "../src/config/load.ts";
import { preflight } from "../src/server/preflight.ts";

/** What `scalwsd check` finds in a file: error lines (none: the file is ok) and warning lines. */
export interface CheckResult {
  readonly errors: readonly string[];
  readonly warnings: readonly string[];
}

/** Loads and preflights `file` as `scalwsd check` does; every line names the file. */
export async function checkFile(file: string): Promise<CheckResult> {
  try {
    const { config, warnings } = await loadConfig(file);
    const problems = preflight(config);
    if (problems.length > 0) return { errors: problems.map((p) => `${file}: ${p}`), warnings: [] };
    return { errors: [], warnings: warnings.map((w) => `${file}: warning: ${w}`) };
  } catch (err) {
    if (err instanceof ConfigError) return { errors: [err.message], warnings: [] };
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
