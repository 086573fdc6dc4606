/**
 * "Did you mean" for unknown keys: the keys a zod schema allows at a place in the document, and
 * the one closest to a misspelt key. Suggestions only; what is valid is still the schema's say.
 */
import { z } from "zod";

type Segment = string | number;

/** Strips wrappers (optional, default, effects, lazy, ...) down to the schema that holds keys. */
function unwrap(schema: z.ZodTypeAny): z.ZodTypeAny {
  for (let i = 0; i < 32; i++) {
    if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) {
      schema = schema.unwrap();
    } else if (schema instanceof z.ZodDefault) schema = schema.removeDefault();
    else if (schema instanceof z.ZodEffects) schema = schema.innerType();
    else if (schema instanceof z.ZodLazy) schema = schema.schema;
    else if (schema instanceof z.ZodPipeline) schema = schema._def.in;
    else if (schema instanceof z.ZodBranded) schema = schema.unwrap();
    else if (schema instanceof z.ZodReadonly) schema = schema._def.innerType;
    else return schema;
  }
  return schema;
}

function child(data: unknown, key: Segment): unknown {
  return typeof data === "object" && data !== null
    ? (data as Record<string | number, unknown>)[key]
    : undefined;
}

/**
 * The schemas (more than one under a union) that `path` leads to inside `schema`; `data` (the
 * value checked) picks a discriminated union's branch by its `type`.
 */
function schemasAt(
  schema: z.ZodTypeAny,
  path: readonly Segment[],
  data: unknown,
  depth = 0,
): z.ZodTypeAny[] {
  if (depth > 64) return [];
  const s = unwrap(schema);
  if (s instanceof z.ZodDiscriminatedUnion) {
    const chosen = s.optionsMap.get(child(data, s.discriminator) as z.Primitive);
    if (chosen !== undefined) return schemasAt(chosen, path, data, depth + 1);
  }
  if (s instanceof z.ZodUnion || s instanceof z.ZodDiscriminatedUnion) {
    const options = [...(s.options as Iterable<z.ZodTypeAny>)];
    return options.flatMap((o) => schemasAt(o, path, data, depth + 1));
  }
  if (s instanceof z.ZodIntersection) {
    return [
      ...schemasAt(s._def.left, path, data, depth + 1),
      ...schemasAt(s._def.right, path, data, depth + 1),
    ];
  }
  if (path.length === 0) return [s];
  const [head, ...rest] = path;
  const next = child(data, head);
  if (s instanceof z.ZodObject) {
    const field = typeof head === "string" ? s.shape[head] : undefined;
    return field === undefined ? [] : schemasAt(field, rest, next, depth + 1);
  }
  if (s instanceof z.ZodArray) return schemasAt(s.element, rest, next, depth + 1);
  if (s instanceof z.ZodRecord) return schemasAt(s.valueSchema, rest, next, depth + 1);
  if (s instanceof z.ZodTuple && typeof head === "number") {
    const item = s.items[head];
    return item === undefined ? [] : schemasAt(item, rest, next, depth + 1);
  }
  return [];
}

/**
 * The keys the mappings at `path` inside `schema` may hold (every union branch's, but only the
 * chosen branch of a discriminated union when `data` names one).
 */
export function keysAt(schema: z.ZodTypeAny, path: readonly Segment[], data?: unknown): string[] {
  const keys = new Set<string>();
  for (const s of schemasAt(schema, path, data)) {
    if (s instanceof z.ZodObject) { for (const k of Object.keys(s.shape)) keys.add(k); }
  }
  return [...keys];
}

/** Optimal string alignment distance: edits, with a swap of two neighbours as one. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array(rows * cols).fill(0);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(
        d[(i - 1) * cols + j] + 1,
        d[i * cols + j - 1] + 1,
        d[(i - 1) * cols + j - 1] + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        v = Math.min(v, d[(i - 2) * cols + j - 2] + 1);
      }
      d[i * cols + j] = v;
    }
  }
  return d[rows * cols - 1];
}

/**
 * The candidate closest to `word` when it is close enough to be a slip (one edit in a word of
 * three letters or more, two in one of six or more; letter case is ignored), else undefined. Ties go to the
 * candidate listed first.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    if (c === word) continue;
    const dist = editDistance(lower, c.toLowerCase());
    if (dist < bestDistance) {
      best = c;
      bestDistance = dist;
    }
  }
  if (best === undefined) return undefined;
  const close = bestDistance === 0 || (bestDistance === 1 && word.length >= 3) ||
    (bestDistance === 2 && word.length >= 6);
  return close ? best : undefined;
}

/** `unknown key "balanse"`, with `; did you mean "balance"?` when a known key is close. */
export function unknownKeyMessage(key: string, known: readonly string[]): string {
  const near = closest(key, known);
  return near === undefined
    ? `unknown key ${JSON.stringify(key)}`
    : `unknown key ${JSON.stringify(key)}; did you mean ${JSON.stringify(near)}?`;
}
