import { ConfigError } from "../src/config/errors.ts";
import { loadConfig } from "../src/config/load.ts";
import { preflight } from "../src/server/preflight.ts";

/** `scalwsd check --config FILE`: prints every error and exits 1, or prints `ok` and exits 0. */
export async function check(file: string): Promise<number> {
  try {
    const { config, warnings } = await loadConfig(file);
    const problems = preflight(config);
    if (problems.length > 0) {
      for (const p of problems) console.error(`${file}: ${p}`);
      return 1;
    }
    for (const w of warnings) console.error(`${file}: warning: ${w}`);
    console.log("ok");
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 1;
    }
    console.error(`${file}: ${(err as Error).message ?? err}`);
    return 1;
  }
}
