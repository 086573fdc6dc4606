/**
 * What provisioning builds and where it reports: the draft of a document (its provisioned
 * parts, the pool references to check in `validate.ts`), the error and warning sink, the files
 * named by the document, and the small helpers every part of provisioning shares.
 */
import type { ReadFile } from "./policies.ts";
import type { ApplicationConfig, PoolConfig, ServerConfig } from "./types.ts";

/** Where errors and warnings go, each as `PATH: MESSAGE`. */
export interface Sink {
  readonly errors: string[];
  readonly warnings: string[];
}

/** What a path names, for the settings that must name a directory (`root`, `cwd`). */
export type Stat = (path: string) => { readonly isDirectory: boolean };

/** Where files named by the document are read from. */
export interface Files {
  /** Directory of the main file: relative names in it are resolved against it. */
  readonly dir: string;
  readonly readFile: ReadFile;
  /** Default `Deno.statSync`. */
  readonly stat?: Stat;
}

export const DEFAULT_FILES: Files = { dir: ".", readFile: (p) => Deno.readFileSync(p) };

/** A use of a pool by name, checked against `upstreams` in `validate.ts`. */
export interface PoolRef {
  readonly pool: string;
  /** The protocol the pool must speak: `fastcgi` for `type: php`, else `http`. */
  readonly protocol?: "http" | "fastcgi";
  /** Path of the field naming the pool (`...runtime.upstream.pool`). */
  readonly path: string;
}

export interface DraftApplication {
  readonly path: string;
  readonly name: string;
  readonly domains: readonly string[];
  /** Undefined when the application has errors. */
  readonly config?: ApplicationConfig;
}

export interface DraftTenant {
  readonly path: string;
  /** The site file it came from; undefined for the main file. */
  readonly file?: string;
  /** Undefined when the tenant itself failed its schema. */
  readonly name?: string;
  readonly applications: DraftApplication[];
}

/** The provisioned parts of a document; a part is missing when it has errors. */
export interface Draft {
  server?: ServerConfig;
  readonly pools: Map<string, PoolConfig>;
  /** Every pool name declared in `upstreams`, valid or not, so references resolve. */
  readonly poolNames: Set<string>;
  readonly tenants: DraftTenant[];
  readonly poolRefs: PoolRef[];
  /** False when some application failed its schema, so the set of domains is incomplete. */
  allApplications: boolean;
  /** The main file, to name it when a site file repeats one of its domains. */
  mainFile?: string;
}

/** Errors, warnings and where files are read. */
export type Context = Sink & Files;

/** Not `push(...list)`: a 10,000-member list may hold more errors than a call takes. */
export function append(to: string[], list: readonly string[]): void {
  for (const item of list) to.push(item);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `value[key]` when `value` is a mapping; runtimes and routes are parsed from there. */
export function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

export function listField(value: unknown, key: string): readonly unknown[] {
  const list = field(value, key);
  return Array.isArray(list) ? list : [];
}
