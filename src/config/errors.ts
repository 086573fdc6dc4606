/**
 * A configuration file that cannot be used. `errors` holds every problem found, each as
 * `PATH: MESSAGE` (`upstreams.api.members[1].weight: must be between 1 and 1000`), or
 * `line L, column C: MESSAGE` for YAML syntax errors; `message` is those lines, each
 * prefixed with the file name and a colon, joined by newlines.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly file: string;
  readonly errors: readonly string[];

  /** `siteFiles`: errors that start with one of these (`FILE: PATH: MESSAGE`) keep their name. */
  /** Each error with the file it is in: `FILE: PATH: MESSAGE`. */
  readonly lines: readonly string[];

  constructor(file: string, errors: readonly string[], siteFiles: readonly string[] = []) {
    const lines = errors.map((e) =>
      siteFiles.some((f) => e.startsWith(`${f}: `)) ? e : `${file}: ${e}`
    );
    super(lines.join("\n"));
    this.lines = Object.freeze(lines);
    this.file = file;
    this.errors = Object.freeze([...errors]);
  }
}

/**
 * A single value that does not parse (`invalid duration "10x"`); thrown by the value parsers
 * (`parseDuration`, `parseSize`, the address parsers) and turned into `PATH: MESSAGE` by the
 * loader, which knows the path.
 */
export class ValueError extends Error {
  override readonly name = "ValueError";
}
