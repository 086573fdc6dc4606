/**
 * Where a key path of a YAML file is written: `upstreams.api.members[1].weight` -> line 14,
 * column 9. The loader keeps one `SourceMap` per file it parsed (the main file and each site
 * file) and uses it to turn `PATH: MESSAGE` problems into `FILE:LINE:COLUMN: PATH: MESSAGE`.
 * It only reads positions; it never changes what a document means.
 */
import YAML, { type Document, LineCounter } from "yaml";

/** A position in a file, both counted from 1. */
export interface Position {
  readonly line: number;
  readonly col: number;
}

type Segment = string | number;

const SEGMENT = /\[(\d+)\]|([^.[\]]+)/g;

/**
 * Splits a formatted path (`upstreams.api.members[1].weight`, see `formatPath`) into its
 * segments; `(root)` is the empty path. Returns undefined for text that is not a path.
 */
export function parsePath(text: string): Segment[] | undefined {
  if (text === "(root)") return [];
  if (text === "" || /\s/.test(text)) return undefined;
  const out: Segment[] = [];
  let at = 0;
  SEGMENT.lastIndex = 0;
  for (let m = SEGMENT.exec(text); m !== null; m = SEGMENT.exec(text)) {
    // Only a "." may stand between two segments.
    const gap = text.slice(at, m.index);
    if (gap !== "" && gap !== ".") return undefined;
    out.push(m[1] !== undefined ? Number(m[1]) : m[2]);
    at = SEGMENT.lastIndex;
  }
  return at === text.length ? out : undefined;
}

function nodeStart(node: unknown): number | undefined {
  const range = (node as { range?: readonly number[] } | null)?.range;
  return range === undefined ? undefined : range[0];
}

/** The positions of one parsed YAML file. */
export class SourceMap {
  readonly #doc: Document;
  readonly #lines: LineCounter;

  constructor(doc: Document, lines: LineCounter) {
    this.#doc = doc;
    this.#lines = lines;
  }

  /** Parses `text` only for its positions (a file whose YAML fails has none worth giving). */
  static of(text: string): SourceMap {
    const lines = new LineCounter();
    const doc = YAML.parseDocument(text, { lineCounter: lines, uniqueKeys: false });
    return new SourceMap(doc, lines);
  }

  /**
   * The position of `path`: of the value when it exists; of the mapping that lacks it when
   * only its last key is missing (a required key); else undefined. With `key`, the position of
   * that key in the mapping at `path` (an unknown key is reported on its mapping).
   */
  locate(path: readonly Segment[], key?: string): Position | undefined {
    let node: unknown = this.#doc.contents;
    const pairNamed = (map: YAML.YAMLMap, name: string) =>
      map.items.find((p) => YAML.isScalar(p.key) && String(p.key.value) === name);
    let offset = nodeStart(node);
    let i = 0;
    while (i < path.length && node !== null && node !== undefined) {
      const seg = path[i];
      if (YAML.isSeq(node) && typeof seg === "number") {
        node = node.items[seg];
        i++;
      } else if (YAML.isMap(node)) {
        const map = node;
        // A key may itself contain dots (a header or query name): try the longest join first.
        let found = false;
        for (let j = path.length; j > i && !found; j--) {
          const name = path.slice(i, j).join(".");
          const pair = pairNamed(map, name);
          if (pair !== undefined) {
            node = pair.value ?? pair.key;
            offset = nodeStart(pair.value) ?? nodeStart(pair.key) ?? offset;
            i = j;
            found = true;
          }
        }
        if (!found) break;
        continue;
      } else break;
      offset = nodeStart(node) ?? offset;
    }
    // Only the last key may be missing (a required key points at the mapping that lacks it).
    if (i < path.length - 1) return undefined;
    if (key !== undefined && i === path.length && YAML.isMap(node)) {
      const pair = pairNamed(node, key);
      offset = nodeStart(pair?.key) ?? offset;
    }
    if (offset === undefined) return undefined;
    const pos = this.#lines.linePos(offset);
    return { line: pos.line, col: pos.col };
  }
}

const UNKNOWN_KEY = /^unknown key "((?:[^"\\]|\\.)*)"/;

/**
 * `PATH: MESSAGE` as `FILE:LINE:COLUMN: PATH: MESSAGE` when `map` knows where PATH is written,
 * else `FILE: PATH: MESSAGE`. A YAML syntax error (`line L, column C: MESSAGE`) becomes
 * `FILE:L:C: MESSAGE`. `label` (`warning: `) goes after the place.
 */
export function placeProblem(
  file: string,
  problem: string,
  map: SourceMap | undefined,
  label = "",
): string {
  const syntax = /^line (\d+), column (\d+): /.exec(problem);
  if (syntax !== null) {
    return `${file}:${syntax[1]}:${syntax[2]}: ${label}${problem.slice(syntax[0].length)}`;
  }
  const pos = map === undefined ? undefined : positionOf(problem, map);
  const at = pos === undefined ? file : `${file}:${pos.line}:${pos.col}`;
  return `${at}: ${label}${problem}`;
}

function positionOf(problem: string, map: SourceMap): Position | undefined {
  const colon = problem.indexOf(": ");
  if (colon < 0) return undefined;
  const path = parsePath(problem.slice(0, colon));
  if (path === undefined) return undefined;
  let key: string | undefined;
  const unknown = UNKNOWN_KEY.exec(problem.slice(colon + 2));
  if (unknown !== null) {
    try {
      key = JSON.parse(`"${unknown[1]}"`);
    } catch { /* keep the mapping's position */ }
  }
  return map.locate(path, key);
}
