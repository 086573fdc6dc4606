/**
 * Just enough of source maps (v3) to turn a V8 position in Deno's emitted JavaScript into a
 * line of the TypeScript source: VLQ decoding of `mappings` and a lookup by generated line.
 */

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < B64.length; i++) DIGIT[B64.charCodeAt(i)] = i;

/** One mapping: generated column -> source index, line and column (all 0-based). */
export interface Segment {
  genCol: number;
  source: number;
  line: number;
  col: number;
}

/** Decodes a `mappings` string into segments per generated line (0-based), sorted by column. */
export function decodeMappings(mappings: string): Segment[][] {
  const lines: Segment[][] = [];
  let current: Segment[] = [];
  let source = 0;
  let line = 0;
  let col = 0;
  let genCol = 0;
  const fields: number[] = [];
  let value = 0;
  let shift = 0;
  const flush = () => {
    // Segments of 1 field name no source position; 4 or 5 do.
    if (fields.length >= 4) {
      genCol += fields[0];
      source += fields[1];
      line += fields[2];
      col += fields[3];
      current.push({ genCol, source, line, col });
    } else if (fields.length >= 1) {
      genCol += fields[0];
    }
    fields.length = 0;
  };
  for (let i = 0; i < mappings.length; i++) {
    const ch = mappings.charCodeAt(i);
    if (ch === 59 /* ; */ || ch === 44 /* , */) {
      flush();
      if (ch === 59) {
        lines.push(current.sort((a, b) => a.genCol - b.genCol));
        current = [];
        genCol = 0;
      }
      continue;
    }
    const d = ch < 128 ? DIGIT[ch] : -1;
    if (d < 0) {
      throw new Error(`Invalid base64 character "${mappings[i]}" in source map mappings at ${i}`);
    }
    value += (d & 31) << shift;
    if (d & 32) {
      shift += 5;
      continue;
    }
    fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  flush();
  lines.push(current.sort((a, b) => a.genCol - b.genCol));
  return lines;
}

/** The source line (0-based) of generated `line`/`col` (0-based); -1 when unmapped. */
export function sourceLine(lines: readonly Segment[][], line: number, col: number): number {
  const segs = lines[line];
  if (segs === undefined || segs.length === 0) return -1;
  let best = segs[0];
  for (const s of segs) {
    if (s.genCol > col) break;
    best = s;
  }
  return best.line;
}

/** The decoded inline source map (`sourceMappingURL=data:...;base64,`) of emitted code. */
export function inlineMap(code: string): Segment[][] | undefined {
  const m =
    /\/\/# sourceMappingURL=data:application\/json;(?:charset=utf-8;)?base64,([A-Za-z0-9+/=]+)/
      .exec(code);
  if (m === null) return undefined;
  const json = JSON.parse(
    new TextDecoder().decode(Uint8Array.from(atob(m[1]), (c) => c.charCodeAt(0))),
  );
  return typeof json.mappings === "string" ? decodeMappings(json.mappings) : undefined;
}
