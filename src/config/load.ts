/**
 * The configuration loader: YAML text -> zod schema -> provision -> validate -> a deeply
 * frozen `Config`. Every error of the file is collected and thrown at once in a
 * `ConfigError`; warnings come back with the config.
 */
import YAML from "yaml";
import { ConfigError } from "./errors.ts";
import { deepFreeze } from "./freeze.ts";
import { expandGlob, type ListDir, listDirSync } from "./glob.ts";
import { type Draft, type Files, provision, provisionSite, type Sink } from "./provision.ts";
import type { Config, Loaded, SiteFile } from "./types.ts";
import { validate } from "./validate.ts";

interface YamlProblem {
  readonly message: string;
  readonly linePos?: readonly { line: number; col: number }[];
}

/** `line L, column C: MESSAGE`, without the position and excerpt that `yaml` appends. */
function yamlMessage(problem: YamlProblem): string {
  const first = problem.message.split("\n")[0];
  const message = first.replace(/ at line \d+, column \d+:?$/, "");
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

/** The directory of `file` ("." for a bare name). */
function dirOf(file: string): string {
  const slash = file.lastIndexOf("/");
  return slash < 0 ? "." : slash === 0 ? "/" : file.slice(0, slash);
}

/** How a load reads files: the main file's directory is added by the loader. */
export interface LoadFiles {
  readonly readFile?: (path: string) => Uint8Array;
  readonly listDir?: ListDir;
}

/**
 * Reads the site files of `server.include` into `draft`; returns their names. A glob matching
 * nothing is fine; an unreadable or broken site file is an error naming it.
 */
function includeSites(draft: Draft, main: string, files: Files, listDir: ListDir, sink: Sink) {
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
      const doc = YAML.parseDocument(text, { prettyErrors: true, uniqueKeys: true });
      if (doc.errors.length > 0) {
        for (const err of doc.errors) sink.errors.push(`${site}: ${yamlMessage(err)}`);
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
  const doc = YAML.parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) throw new ConfigError(file, doc.errors.map(yamlMessage));
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    // An alias to a missing anchor, or alias expansion beyond the limit ("billion laughs").
    throw new ConfigError(file, [`(root): ${e instanceof Error ? e.message : String(e)}`]);
  }
  return configFromData(data, file, doc.warnings.map(yamlMessage), io);
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
  const sink: Sink = { errors: [], warnings };
  const files: Files = {
    dir: dirOf(file),
    readFile: io.readFile ?? ((p) => Deno.readFileSync(p)),
  };
  const draft = provision(data, sink, files);
  draft.mainFile = file;
  const sites = includeSites(draft, file, files, io.listDir ?? listDirSync, sink);
  validate(draft, sink);
  if (sink.errors.length > 0) throw new ConfigError(file, sink.errors, sites);
  return deepFreeze({ config: assemble(draft, file, sites), warnings: sink.warnings });
}

/** Reads `file` and parses it like `parseConfig`; an unreadable file is a `ConfigError` too. */
export async function loadConfig(file: string): Promise<Loaded> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    throw new ConfigError(file, [`cannot read file: ${e instanceof Error ? e.message : e}`]);
  }
  return parseConfig(text, file);
}
