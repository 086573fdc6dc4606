/**
 * The configuration loader: YAML text -> zod schema -> provision -> validate -> a deeply
 * frozen `Config`. Every error of the file is collected and thrown at once in a
 * `ConfigError`; warnings come back with the config.
 */
import YAML from "yaml";
import { ConfigError } from "./errors.ts";
import { deepFreeze } from "./freeze.ts";
import { type Draft, provision, type Sink } from "./provision.ts";
import type { Config, Loaded } from "./types.ts";
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

function assemble(draft: Draft, file: string): Config {
  const missing = () => {
    throw new Error("configuration part missing without an error");
  };
  return {
    file,
    server: draft.server ?? missing(),
    upstreams: Object.fromEntries(draft.pools),
    tenants: draft.tenants.map((t) => ({
      name: t.name ?? missing(),
      applications: t.applications.map((a) => a.config ?? missing()),
    })),
  };
}

/**
 * Parses and checks configuration text; `file` names it in messages and in `Config.file`.
 * Throws `ConfigError` with every problem found (YAML syntax errors with line and column).
 */
export function parseConfig(text: string, file: string): Loaded {
  const doc = YAML.parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) throw new ConfigError(file, doc.errors.map(yamlMessage));
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    // An alias to a missing anchor, or alias expansion beyond the limit ("billion laughs").
    throw new ConfigError(file, [`(root): ${e instanceof Error ? e.message : String(e)}`]);
  }
  return configFromData(data, file, doc.warnings.map(yamlMessage));
}

/**
 * Checks an already parsed document (plain data, as from YAML or JSON) like `parseConfig`;
 * `warnings` are prepended to the loader's own.
 */
export function configFromData(data: unknown, file: string, warnings: string[] = []): Loaded {
  const sink: Sink = { errors: [], warnings };
  const draft = provision(data, sink);
  validate(draft, sink);
  if (sink.errors.length > 0) throw new ConfigError(file, sink.errors);
  return deepFreeze({ config: assemble(draft, file), warnings: sink.warnings });
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
