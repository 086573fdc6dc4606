import { ConfigError } from "../src/config/errors.ts";
import { loadConfig } from "../src/config/load.ts";

/** `scalwsd check --config FILE`: prints every error and exits 1, or prints `ok` and exits 0. */
export async function check(file: string): Promise<number> {
  try {
    const { warnings } = await loadConfig(file);
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
