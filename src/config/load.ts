/**
 * The configuration loader: YAML text -> zod schema -> provision -> validate -> a deeply
 * frozen `Config`. Every error of the file is collected and thrown at once in a
 * `ConfigError`; warnings come back with the config.
 */
import YAML, { LineCounter } from "yaml";
import { ConfigError, placeIn } from "./errors.ts";
import { deepFreeze } from "./freeze.ts";
import { expandGlob, type ListDir, listDirSync } from "./glob.ts";
import { placePaths } from "./place_paths.ts";
import { type Draft, type Files, provision, provisionSite, type Sink } from "./provision.ts";
import type { Stat } from "./provision_draft.ts";
import type { Config, Loaded, SiteFile } from "./types.ts";
import { SourceMap } from "./source_map.ts";
import { validate } from "./validate.ts";

interface YamlProblem {
  readonly message: string;
  readonly code?: string;
  /** Offsets in the text. */
  readonly pos?: readonly number[];
  readonly linePos?: readonly { line: number; col: number }[];
}

/**
 * `line L, column C: MESSAGE`, without the position and excerpt that `yaml` appends. A key
 * written twice in one mapping is named (`yaml` says only "Map keys must be unique").
 */
function yamlMessage(problem: YamlProblem, text = ""): string {
  const first = problem.message.split("\n")[0];
  let message = first.replace(/ at line \d+, column \d+:?$/, "");
  if (problem.code === "DUPLICATE_KEY" && problem.pos !== undefined) {
    const key = /^(?:"([^"\n]*)"|'([^'\n]*)'|([^:\n]*?))\s*:/.exec(text.slice(problem.pos[0]));
    const name = key?.[1] ?? key?.[2] ?? key?.[3];
    if (name) message = `duplicate key "${name}": ${message}`;
  }
  const pos = problem.linePos?.[0];
  return pos === undefined ? message : `line ${pos.line}, column ${pos.col}: ${message}`;
}

function assemble(draft: Draft, file: string, siteFiles: readonly string[]): Config {
  const missing = () => {
    throw new Error("configuration part missing without an error");
  };
  const tenants = draft.tenants.map((t) => ({
    name: t.name ?? missing(),
    applications: t.applications.map((a) => a.config ?? missing()),
    ...(t.file !== undefined ? { file: t.file } : {}),
  }));
  const sites: SiteFile[] = siteFiles.map((f) => {
    const own = tenants.filter((t) => t.file === f);
    return {
      file: f,
      tenants: own.map((t) => t.name),
      domains: own.flatMap((t) => t.applications.flatMap((a) => a.domains)),
    };
  });
  return {
    file,
    server: draft.server ?? missing(),
    upstreams: Object.fromEntries(draft.pools),
    tenants,
    sites,
  };
}

/**
 * The absolute directory of `file`: relative names in a file resolve against it, and messages
 * show the resolved path. A relative `file` is taken from the working directory.
 */
export function dirOf(file: string): string {
  const slash = file.lastIndexOf("/");
  const dir = slash < 0 ? "." : slash === 0 ? "/" : file.slice(0, slash);
  if (dir.startsWith("/")) return dir;
  let cwd: string;
  try {
    cwd = Deno.cwd();
  } catch {
    return dir; // no --allow-read: leave it relative
  }
  const base = cwd.endsWith("/") ? cwd.slice(0, -1) : cwd;
  if (dir === ".") return base;
  return `${base}/${dir.replace(/^\.\//, "")}`;
}

/** Where each file of a load was written: its source map, by file name. */
type Sources = Map<string, SourceMap>;

/** The positions behind a `Loaded`, to place its warnings and later problems (`placeProblems`). */
const PLACES = new WeakMap<Loaded, { file: string; sites: readonly string[]; sources: Sources }>();

/** A `ConfigError` for problems found after loading (a build's preflight), placed like the rest. */
export function loadedError(loaded: Loaded, problems: readonly string[]): ConfigError {
  const places = PLACES.get(loaded);
  return new ConfigError(
    places?.file ?? loaded.config.file,
    problems,
    places?.sites ?? [],
    places?.sources ?? new Map(),
  );
}

/**
 * Problems about a loaded configuration (its warnings, or checks made after loading) as an
 * operator reads them: `FILE:LINE:COLUMN: PATH: MESSAGE` where the place is known, else
 * `FILE: PATH: MESSAGE`. `label` goes before the path (`warning: `).
 */
export function placeProblems(loaded: Loaded, problems: readonly string[], label = ""): string[] {
  const places = PLACES.get(loaded);
  const file = places?.file ?? loaded.config.file;
  return problems.map((p) =>
    placeIn(file, p, places?.sites ?? [], places?.sources ?? new Map(), label)
  );
}

/** How a load reads files: the main file's directory is added by the loader. */
export interface LoadFiles {
  readonly readFile?: (path: string) => Uint8Array;
  readonly listDir?: ListDir;
  /** What a path is (a directory?), for `root` and `cwd`; default `Deno.statSync`. */
  readonly stat?: Stat;
  /**
   * The directory relative names of the main file resolve against, when the file was copied
   * away from it (the controller's generations); default the file's own directory.
   */
  readonly dir?: string;
}

/**
 * Reads the site files of `server.include` into `draft`; returns their names. A glob matching
 * no file, an unreadable or a broken site file are errors naming it.
 */
function includeSites(
  draft: Draft,
  main: string,
  files: Files,
  listDir: ListDir,
  sink: Sink,
  sources: Sources,
) {
  const names: string[] = [];
  const include = draft.server?.include ?? [];
  for (let i = 0; i < include.length; i++) {
    let matched: string[];
    try {
      matched = expandGlob(include[i], files.dir, listDir);
    } catch (e) {
      sink.errors.push(`server.include[${i}]: ${(e as Error).message}`);
      continue;
    }
    if (matched.length === 0) {
      sink.errors.push(
        `server.include[${i}]: "${include[i]}" matches no file (looked in ${files.dir})`,
      );
      continue;
    }
    for (const site of matched) {
      if (names.includes(site) || site === main) continue;
      names.push(site);
      let text: string;
      try {
        text = new TextDecoder().decode(files.readFile(site));
      } catch (e) {
        sink.errors.push(`${site}: cannot read file: ${(e as Error).message}`);
        continue;
      }
      const lineCounter = new LineCounter();
      const doc = YAML.parseDocument(text, { prettyErrors: true, uniqueKeys: true, lineCounter });
      sources.set(site, new SourceMap(doc, lineCounter));
      if (doc.errors.length > 0) {
        for (const err of doc.errors) sink.errors.push(`${site}: ${yamlMessage(err, text)}`);
        continue;
      }
      for (const w of doc.warnings) sink.warnings.push(`${site}: ${yamlMessage(w)}`);
      let data: unknown;
      try {
        data = doc.toJS({ maxAliasCount: 100 });
      } catch (e) {
        sink.errors.push(`${site}: (root): ${e instanceof Error ? e.message : String(e)}`);
        continue;
      }
      provisionSite(data, site, draft, sink, files);
    }
  }
  return names;
}

/**
 * Parses and checks configuration text; `file` names it in messages and in `Config.file`.
 * Throws `ConfigError` with every problem found (YAML syntax errors with line and column).
 */
export function parseConfig(text: string, file: string, io: LoadFiles = {}): Loaded {
  const lineCounter = new LineCounter();
  const doc = YAML.parseDocument(text, { prettyErrors: true, uniqueKeys: true, lineCounter });
  if (doc.errors.length > 0) {
    throw new ConfigError(file, doc.errors.map((e) => yamlMessage(e, text)));
  }
  const sources: Sources = new Map([[file, new SourceMap(doc, lineCounter)]]);
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    // An alias to a missing anchor, or alias expansion beyond the limit ("billion laughs").
    throw new ConfigError(file, [`(root): ${e instanceof Error ? e.message : String(e)}`]);
  }
  return fromData(data, file, doc.warnings.map((w) => yamlMessage(w)), io, sources);
}

/**
 * Checks an already parsed document (plain data, as from YAML or JSON) like `parseConfig`;
 * `warnings` are prepended to the loader's own.
 */
export function configFromData(
  data: unknown,
  file: string,
  warnings: string[] = [],
  io: LoadFiles = {},
): Loaded {
  return fromData(data, file, warnings, io, new Map());
}

function fromData(
  data: unknown,
  file: string,
  warnings: string[],
  io: LoadFiles,
  sources: Sources,
): Loaded {
  const sink: Sink = { errors: [], warnings };
  const files: Files = {
    dir: io.dir ?? dirOf(file),
    readFile: io.readFile ?? ((p) => Deno.readFileSync(p)),
    ...(io.stat !== undefined ? { stat: io.stat } : {}),
  };
  const draft = provision(data, sink, files);
  draft.mainFile = file;
  const sites = includeSites(draft, file, files, io.listDir ?? listDirSync, sink, sources);
  placePaths(draft, files, sink);
  validate(draft, sink);
  if (sink.errors.length > 0) throw new ConfigError(file, sink.errors, sites, sources);
  const loaded = deepFreeze({ config: assemble(draft, file, sites), warnings: sink.warnings });
  PLACES.set(loaded, { file, sites, sources });
  return loaded;
}

/** Reads `file` and parses it like `parseConfig`; an unreadable file is a `ConfigError` too. */
export async function loadConfig(file: string, io: LoadFiles = {}): Promise<Loaded> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    throw new ConfigError(file, [`cannot read file: ${e instanceof Error ? e.message : e}`]);
  }
  return parseConfig(text, file, io);
}
