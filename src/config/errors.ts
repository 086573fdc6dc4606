/**
 * The configuration's error classes: `ConfigError` (every problem of a file, each naming its path,
 * and its line where the source map knows it) and `ValueError` (one value that does not parse),
 * and `placeIn`, which prefixes a problem with where it was found.
 *
 * @module
 */

import { placeProblem, type SourceMap } from "./source_map.ts";

/**
 * A configuration file that cannot be used. `errors` holds every problem found, each as
 * `PATH: MESSAGE` (`upstreams.api.members[1].weight: must be between 1 and 1000`), or
 * `line L, column C: MESSAGE` for YAML syntax errors; a site file's problems start with its
 * name (`FILE: PATH: MESSAGE`). `lines` are the same problems as an operator reads them,
 * `FILE:LINE:COLUMN: PATH: MESSAGE` wherever the file's source map knows the place (else
 * `FILE: PATH: MESSAGE`); `message` is `lines` joined by newlines.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly file: string;
  readonly errors: readonly string[];
  /** Each error with the file, line and column it is at. */
  readonly lines: readonly string[];

  /**
   * `siteFiles`: errors that start with one of these (`FILE: PATH: MESSAGE`) are placed in that
   * file. `sources`: the source map of each file parsed, by file name.
   */
  constructor(
    file: string,
    errors: readonly string[],
    siteFiles: readonly string[] = [],
    sources: ReadonlyMap<string, SourceMap> = new Map(),
  ) {
    const lines = errors.map((e) => placeIn(file, e, siteFiles, sources));
    super(lines.join("\n"));
    this.lines = Object.freeze(lines);
    this.file = file;
    this.errors = Object.freeze([...errors]);
  }
}

/** One problem of the main file or of a site file, placed by that file's source map. */
export function placeIn(
  file: string,
  problem: string,
  siteFiles: readonly string[],
  sources: ReadonlyMap<string, SourceMap>,
  label = "",
): string {
  const site = siteFiles.find((f) => problem.startsWith(`${f}: `));
  if (site !== undefined) {
    return placeProblem(site, problem.slice(site.length + 2), sources.get(site), label);
  }
  return placeProblem(file, problem, sources.get(file), label);
}

/**
 * A single value that does not parse (`invalid duration "10x"`); thrown by the value parsers
 * (`parseDuration`, `parseSize`, the address parsers) and turned into `PATH: MESSAGE` by the
 * loader, which knows the path.
 */
export class ValueError extends Error {
  override readonly name = "ValueError";
}
