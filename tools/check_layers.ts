/**
 * Checks that the code's rooms (folders) import one way only.
 *
 * A room is `src/<name>/` (subfolders belong to it), `admin/`, `cli/`, or `main.ts`. The folder
 * graph is built from the import and export statements of every `.ts` file, tests included
 * (type-only imports count too). It fails (exit 1) on an import against {@linkcode LAYERS}, on
 * any folder cycle, on any file cycle (files that import each other, directly or round a ring:
 * inside one room, since a ring across rooms is a folder cycle already) and on an import from
 * another room that does not go through that room's face, its `mod.ts`, and on a module that
 * does not open with a doc comment saying what it is for (tests and the `_`-named support files
 * only tests import are exempt from both), naming each offending `file:line`, and prints the
 * graph either way.
 *
 * Run: `deno run --allow-read tools/check_layers.ts` (part of `deno task ok` and CI).
 *
 * @module
 */

/**
 * The order, lowest first. A room may import rooms of lower layers only; rooms that share a
 * layer may not import each other.
 *
 * - `observe` (metrics, logs) sits just above `net`: every data-plane room may record.
 * - `front` (scalwsd's own HTTP/1.1 server side) sits with `upstream`: it may use `http1`'s
 *   codec pieces, the pipeline above it uses it.
 * - `controller` sits with `server`: it drives scalwsd processes, never their internals.
 * - `fastcgi` sits just above `http1`: it rides on its connection pool and connections.
 * - `cli` sits above `admin`: `scalwsd run` starts the admin listeners.
 * - `wire` (the HTTP/1 codec: head scanning, chunked decoding and framing, the body pump,
 *   status texts) sits below `http1`, `fastcgi` and `front`, which all read and write it.
 * - `acme` (the ACME client, certificate storage and renewal) sits with `http1`: it needs
 *   `config` and below, and `server` drives it.
 * - `tracing` (OpenTelemetry spans and their export) sits with `http1` too: it needs `config`
 *   and `observe`; the pipeline and the handlers fill in its spans.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ["base"],
  ["net"],
  ["observe"],
  ["config"],
  ["wire"],
  ["http1", "acme", "redis", "tracing"],
  ["fastcgi"],
  ["upstream", "discovery", "front"],
  ["pipeline", "cache"],
  ["handlers", "apps"],
  ["server", "controller"],
  ["admin"],
  ["cli"],
  ["main"],
];

/**
 * Rooms with no face: `cli/` holds the subcommands, and `main.ts` loads the one it runs by
 * itself (a dynamic import), so that `scalwsd ctl` does not load the server. Every other room is
 * entered through its `mod.ts` only, except by `main.ts`: before the SIGUSR1 guard, which may
 * re-execute the process, it imports the two files it needs (`base/usr1.ts`, `observe/log.ts`)
 * rather than two whole rooms.
 */
export const UNFACED: ReadonlySet<string> = new Set(["cli"]);

/** One import statement: the file and line holding it, and the specifier. */
export interface Import {
  file: string;
  line: number;
  specifier: string;
}

/** One import that breaks the order or closes a cycle. */
export interface Violation {
  file: string;
  line: number;
  message: string;
}

/** The folder graph and what is wrong with it. */
export interface Report {
  /** `from -> to` mapped to the number of import statements. */
  edges: Map<string, number>;
  violations: Violation[];
  /** Each folder cycle as the rooms on it, first room repeated at the end. */
  cycles: string[][];
  /** Each file cycle inside a room as the files on it, first file repeated at the end. */
  fileCycles: string[][];
}

const IMPORT_RE =
  /(?:^|[;}\s])(?:import|export)\b(?:[^;"'`]*?\bfrom\s*)?\s*\(?\s*["']([^"']+)["']/g;

/** Every relative import/export specifier of a source text, with its line. */
export function findImports(file: string, text: string): Import[] {
  const out: Import[] = [];
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lineStarts.push(i + 1);
  for (const m of text.matchAll(IMPORT_RE)) {
    const spec = m[1];
    if (!spec.startsWith("./") && !spec.startsWith("../")) continue;
    const at = m.index! + m[0].lastIndexOf(spec);
    let line = 0;
    let lo = 0, hi = lineStarts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (lineStarts[mid] <= at) {
        line = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    const lineText = text.slice(lineStarts[line], text.indexOf("\n", lineStarts[line]) >>> 0);
    const trimmed = lineText.trimStart();
    if (trimmed.startsWith("//") || trimmed.startsWith("*")) continue;
    out.push({ file, line: line + 1, specifier: spec });
  }
  return out;
}

/** Joins a relative specifier onto the importing file's folder; `/`-separated, no leading `./`. */
export function resolve(file: string, specifier: string): string {
  const parts = file.split("/");
  parts.pop();
  for (const p of specifier.split("/")) {
    if (p === "." || p === "") continue;
    if (p === "..") parts.pop();
    else parts.push(p);
  }
  return parts.join("/");
}

/** The room of a repository-relative path, or undefined outside the checked tree. */
export function roomOf(path: string): string | undefined {
  const parts = path.split("/");
  if (parts[0] === "src" && parts.length > 2) return parts[1];
  if (parts[0] === "admin" || parts[0] === "cli") return parts[0];
  if (path === "main.ts") return "main";
  return undefined;
}

/** The face of a room: the one file other rooms import it through. */
export function faceOf(room: string): string {
  return room === "admin" || room === "cli" ? `${room}/mod.ts` : `src/${room}/mod.ts`;
}

/** A test (`*_test.ts`), exempt from the face rule. */
export function isTest(path: string): boolean {
  return path.endsWith("_test.ts");
}

/**
 * The files only tests use: tests, and `_`-named files (`_fuzz.ts`, `_fake_server.ts`) that
 * only such files import.
 */
function testOnly(
  paths: readonly string[],
  importers: ReadonlyMap<string, ReadonlySet<string>>,
): Set<string> {
  const only = new Set(paths.filter(isTest));
  for (let grew = true; grew;) {
    grew = false;
    for (const p of paths) {
      if (only.has(p) || !p.split("/").pop()!.startsWith("_")) continue;
      const by = importers.get(p);
      if (by !== undefined && by.size > 0 && [...by].every((f) => only.has(f))) {
        only.add(p);
        grew = true;
      }
    }
  }
  return only;
}

/** What {@linkcode check} asks beyond the order and the cycles. */
export interface CheckOptions {
  /** Refuse imports from another room that do not go through its face (default false). */
  faces?: boolean;
  /** Rooms exempt from the face rule (default none). */
  unfaced?: ReadonlySet<string>;
  /** Refuse a module (tests excepted) that does not open with a doc comment (default false). */
  docs?: boolean;
}

/** Whether `text` opens with a doc comment that says something (`/** ... *\/`). */
export function hasModuleDoc(text: string): boolean {
  if (!text.startsWith("/**")) return false;
  const end = text.indexOf("*/");
  return end > 0 && /[A-Za-z]/.test(text.slice(3, end));
}

/** Builds the folder graph of `files` (path -> text) and checks it against `layers`. */
export function check(
  files: ReadonlyMap<string, string>,
  layers: readonly (readonly string[])[] = LAYERS,
  options: CheckOptions = {},
): Report {
  const faces = options.faces ?? false;
  const unfaced = options.unfaced ?? new Set();
  const rank = new Map<string, number>();
  layers.forEach((rooms, i) => rooms.forEach((r) => rank.set(r, i)));
  const edges = new Map<string, number>();
  const firstSite = new Map<string, Import>();
  const violations: Violation[] = [];
  const unknown = new Set<string>();
  /** Imports between files of one room, for the file cycles. */
  const fileEdges = new Map<string, number>();
  const fileSite = new Map<string, Import>();
  const paths = [...files.keys()].sort();
  const imports = new Map<string, Import[]>();
  const importers = new Map<string, Set<string>>();
  for (const file of paths) {
    const found = findImports(file, files.get(file)!);
    imports.set(file, found);
    for (const imp of found) {
      const target = resolve(file, imp.specifier);
      if (!importers.has(target)) importers.set(target, new Set());
      importers.get(target)!.add(file);
    }
  }
  const exempt = testOnly(paths, importers);
  for (const file of paths) {
    if (options.docs && !exempt.has(file) && !hasModuleDoc(files.get(file)!)) {
      violations.push({
        file,
        line: 1,
        message: "no module doc: a module opens with a doc comment saying what it is for",
      });
    }
    const from = roomOf(file);
    if (from === undefined) continue;
    if (!rank.has(from) && !unknown.has(from)) {
      unknown.add(from);
      violations.push({
        file,
        line: 1,
        message: `room "${from}" is not in the layer order`,
      });
    }
    for (const imp of imports.get(file)!) {
      const target = resolve(file, imp.specifier);
      const to = roomOf(target);
      if (to === from && files.has(target)) {
        const key = `${file} -> ${target}`;
        fileEdges.set(key, (fileEdges.get(key) ?? 0) + 1);
        if (!fileSite.has(key)) fileSite.set(key, imp);
      }
      if (to === undefined || to === from) continue;
      if (
        faces && from !== "main" && target !== faceOf(to) && !exempt.has(file) &&
        !unfaced.has(to)
      ) {
        violations.push({
          file,
          line: imp.line,
          message: `${from} imports ${target}: other rooms enter ${to} through ${faceOf(to)}`,
        });
      }
      const key = `${from} -> ${to}`;
      edges.set(key, (edges.get(key) ?? 0) + 1);
      if (!firstSite.has(key)) firstSite.set(key, imp);
      const rf = rank.get(from), rt = rank.get(to);
      if (rf === undefined || rt === undefined) continue;
      if (rt > rf) {
        violations.push({
          file,
          line: imp.line,
          message: `${from} imports ${to} ("${imp.specifier}"): ${to} is a higher layer`,
        });
      } else if (rt === rf) {
        violations.push({
          file,
          line: imp.line,
          message: `${from} imports ${to} ("${imp.specifier}"): rooms of one layer ` +
            `do not import each other`,
        });
      }
    }
  }
  const cycles = findCycles(edges);
  for (const cycle of cycles) {
    const site = firstSite.get(`${cycle[0]} -> ${cycle[1]}`)!;
    violations.push({
      file: site.file,
      line: site.line,
      message: `folder cycle ${cycle.join(" -> ")}`,
    });
  }
  const fileCycles = findCycles(fileEdges);
  for (const cycle of fileCycles) {
    const site = fileSite.get(`${cycle[0]} -> ${cycle[1]}`)!;
    violations.push({
      file: site.file,
      line: site.line,
      message: `file cycle ${cycle.join(" -> ")}`,
    });
  }
  return { edges, violations, cycles, fileCycles };
}

/**
 * The cycles of a graph of rooms or files (`edges` keyed `from -> to`): the shortest through
 * every edge inside a strongly connected set (Tarjan), each once, closed by its first node.
 */
export function findCycles(edges: ReadonlyMap<string, number>): string[][] {
  const next = new Map<string, string[]>();
  for (const key of [...edges.keys()].sort()) {
    const [a, b] = key.split(" -> ");
    if (!next.has(a)) next.set(a, []);
    if (!next.has(b)) next.set(b, []);
    next.get(a)!.push(b);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const sets: string[][] = [];
  let counter = 0;
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const set: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        set.push(w);
      } while (w !== v);
      if (set.length > 1) sets.push(set);
    }
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v);
  // Each edge inside a strongly connected set closes at least one cycle: report the shortest
  // cycle through every such edge, each cycle once.
  const inSet = new Map<string, number>();
  sets.forEach((set, i) => set.forEach((v) => inSet.set(v, i)));
  const seen = new Set<string>();
  const cycles: string[][] = [];
  for (const [a, outs] of [...next.entries()].sort()) {
    for (const b of outs) {
      if (inSet.get(a) === undefined || inSet.get(a) !== inSet.get(b)) continue;
      const cycle = shortestCycle(next, a, b, (v) => inSet.get(v) === inSet.get(a));
      const ring = cycle.slice(0, -1);
      const i = ring.indexOf([...ring].sort()[0]);
      const norm = [...ring.slice(i), ...ring.slice(0, i)];
      const key = norm.join(" -> ");
      if (seen.has(key)) continue;
      seen.add(key);
      cycles.push([...norm, norm[0]]);
    }
  }
  return cycles;
}

/** `a -> b -> ... -> a` with the fewest nodes, staying inside `keep`. */
function shortestCycle(
  next: ReadonlyMap<string, string[]>,
  a: string,
  b: string,
  keep: (v: string) => boolean,
): string[] {
  const prev = new Map<string, string>();
  const seen = new Set([b]);
  const queue = [b];
  for (let i = 0; i < queue.length && !prev.has(a); i++) {
    for (const w of next.get(queue[i])!) {
      if (!keep(w) || seen.has(w)) continue;
      seen.add(w);
      prev.set(w, queue[i]);
      queue.push(w);
    }
  }
  // `a` is reachable from `b`: both are in one strongly connected set.
  const path = [a];
  for (let v = a; v !== b;) {
    v = prev.get(v)!;
    path.unshift(v);
  }
  path.unshift(a);
  return path;
}

/** The report as text: edges with counts, then violations. */
export function format(report: Report): string {
  const lines = ["folder graph (importer -> imported: import statements):"];
  for (const key of [...report.edges.keys()].sort()) {
    lines.push(`  ${key}: ${report.edges.get(key)}`);
  }
  if (report.violations.length === 0) {
    lines.push(
      "layers: ok, no folder cycle, no file cycle, no import against the order, every room " +
        "entered through its face, every module documented",
    );
  } else {
    lines.push(`layers: ${report.violations.length} problem(s)`);
    for (const v of report.violations) lines.push(`  ${v.file}:${v.line}: ${v.message}`);
  }
  return lines.join("\n");
}

async function readTree(root: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(`${root}/${dir}`)) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(rel);
      else if (e.isFile && e.name.endsWith(".ts")) {
        files.set(rel, await Deno.readTextFile(`${root}/${rel}`));
      }
    }
  };
  for (const dir of ["src", "admin", "cli"]) await walk(dir);
  files.set("main.ts", await Deno.readTextFile(`${root}/main.ts`));
  return files;
}

if (import.meta.main) {
  const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
  const report = check(await readTree(root), LAYERS, { faces: true, unfaced: UNFACED, docs: true });
  console.log(format(report));
  if (report.violations.length > 0) Deno.exit(1);
}
