/**
 * Configuration generations: `<state_dir>/generations/<n>/scalws.yaml`, a validated,
 * immutable copy of the scalwsd configuration, written atomically and never edited. Instances
 * start against an explicit generation path and number.
 */
import { type Config, ConfigError, dirOf, parseConfig } from "../config/mod.ts";
import { ensureDir, writeFileAtomic } from "../base/mod.ts";

/** The file name of a generation inside its directory. */
export const GENERATION_FILE = "scalws.yaml";

/**
 * Beside it, the directory of the file it was copied from: its relative paths resolve there
 * (`scalwsd run --base-dir`), not in the generation's own directory.
 */
export const BASE_DIR_FILE = "base_dir";

/**
 * Rules a configuration must meet to run under the controller, beyond `scalwsd check`:
 * reuseport listeners on fixed ports. Returns `PATH: MESSAGE` errors.
 */
export function controllerRules(config: Config): string[] {
  const errors: string[] = [];
  const mode = config.server.listener_mode;
  if (mode !== "reuseport") {
    errors.push(`server.listener_mode: must be reuseport under the controller (is ${mode})`);
  }
  config.server.listeners.forEach((l, i) => {
    if (l.port === 0) {
      errors.push(`server.listeners[${i}].address: port 0 cannot be shared by instances`);
    }
  });
  return errors;
}

/** Warnings about settings that instances under the controller replace or leave out. */
export function controllerWarnings(config: Config): string[] {
  const w: string[] = [];
  if (config.server.admin.http) {
    w.push("server.admin.http: not started by instances under the controller (one port per host)");
  }
  return w;
}

/**
 * What `scalwsd check` finds beyond parsing (files a start reads: CA files, the remote admin
 * listener's certificates; `server/preflight.ts`), as `PATH: MESSAGE` errors. Injected: the
 * controller does not import the server.
 */
export type Preflight = (config: Config) => string[];

/**
 * Checks configuration text as `scalwsd check` does (with `preflight`) plus `controllerRules`;
 * throws a `ConfigError` naming `file`, returns the warnings.
 */
export function validateForController(
  text: string,
  file: string,
  preflight: Preflight = () => [],
): string[] {
  const loaded = parseConfig(text, file);
  const errors = [...preflight(loaded.config), ...controllerRules(loaded.config)];
  if (errors.length > 0) throw new ConfigError(file, errors);
  return [...loaded.warnings, ...controllerWarnings(loaded.config)];
}

/**
 * The generations directory of one state directory. These are configuration generations,
 * numbered by the controller; a scalwsd process starts its own generation count from one.
 */
export class ConfigGenerationStore {
  readonly dir: string;

  constructor(stateDir: string, private readonly preflight: Preflight = () => []) {
    this.dir = `${stateDir}/generations`;
  }

  async init(): Promise<void> {
    await ensureDir(this.dir);
  }

  path(n: number): string {
    return `${this.dir}/${n}/${GENERATION_FILE}`;
  }

  /**
   * The directory the relative paths of generation `n` resolve against: that of the file it was
   * copied from; undefined for a generation written before this was kept.
   */
  baseDir(n: number): string | undefined {
    try {
      const dir = Deno.readTextFileSync(`${this.dir}/${n}/${BASE_DIR_FILE}`).trim();
      return dir.startsWith("/") ? dir : undefined;
    } catch {
      return undefined;
    }
  }

  /** Complete generations (their file exists), ascending. */
  async list(): Promise<number[]> {
    const out: number[] = [];
    for await (const e of Deno.readDir(this.dir)) {
      if (!e.isDirectory || !/^[1-9]\d{0,8}$/.test(e.name)) continue;
      try {
        await Deno.stat(this.path(Number(e.name)));
        out.push(Number(e.name));
      } catch { /* a directory whose file was never renamed into place */ }
    }
    return out.sort((a, b) => a - b);
  }

  /** The highest number ever used, counting incomplete directories, so none is reused. */
  private async highest(): Promise<number> {
    let max = 0;
    for await (const e of Deno.readDir(this.dir)) {
      if (e.isDirectory && /^[1-9]\d{0,8}$/.test(e.name)) max = Math.max(max, Number(e.name));
    }
    return max;
  }

  /**
   * Validates `text` (read from `source`) and writes it as the next generation. Throws a
   * `ConfigError` naming `source` and writes nothing when it is invalid.
   */
  async create(text: string, source: string): Promise<{ number: number; warnings: string[] }> {
    const warnings = validateForController(text, source, this.preflight);
    const n = (await this.highest()) + 1;
    await Deno.mkdir(`${this.dir}/${n}`, { mode: 0o700 });
    // The base directory first: the configuration file's rename marks the generation complete.
    await writeFileAtomic(`${this.dir}/${n}/${BASE_DIR_FILE}`, dirOf(source) + "\n");
    await writeFileAtomic(this.path(n), text);
    return { number: n, warnings };
  }

  async exists(n: number): Promise<boolean> {
    try {
      await Deno.stat(this.path(n));
      return true;
    } catch {
      return false;
    }
  }
}
