/**
 * Turns zod issues into `PATH: MESSAGE` strings with short, exact messages, and parses one
 * unit of the document (the server, a pool, a tenant, an application) against its schema.
 */
import { z } from "zod";
import { keysAt, unknownKeyMessage } from "./suggest.ts";

export type Path = readonly (string | number)[];

/**
 * Formats a path the way messages name fields: `upstreams.api.members[1].weight`. The empty
 * path, the document itself, is `(root)`.
 */
export function formatPath(path: Path): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out === "" ? segment : `.${segment}`;
  }
  return out === "" ? "(root)" : out;
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  object: "must be a mapping",
  array: "must be a list",
  string: "must be a string",
  number: "must be a number",
  boolean: "must be true or false",
};

/** Short messages for zod's own issues; our leaf checks set their messages themselves. */
export const errorMap: z.ZodErrorMap = (issue, ctx) => {
  switch (issue.code) {
    case "invalid_type":
      if (issue.received === "undefined") return { message: "is required" };
      return { message: TYPE_NAMES[issue.expected] ?? `must be ${issue.expected}` };
    case "invalid_union_discriminator": {
      // ctx.data is the object whose discriminator (`type`) did not match.
      const data = ctx.data as Record<string, unknown> | undefined;
      const value = data?.type;
      if (value === undefined) return { message: "is required" };
      return {
        message: `unknown type ${JSON.stringify(value)}; must be one of ${
          issue.options.join(", ")
        }`,
      };
    }
    default:
      return { message: ctx.defaultError };
  }
};

/**
 * For a union that no branch accepted, the issues of the branch the value was meant for:
 * the one whose type matched (no `invalid_type` at the union's own path), if exactly one.
 */
function unionBranch(issue: z.ZodInvalidUnionIssue): z.ZodIssue[] | undefined {
  const depth = issue.path.length;
  const matching = issue.unionErrors.filter((e) =>
    !e.issues.some((i) => i.code === "invalid_type" && i.path.length === depth)
  );
  return matching.length === 1 ? matching[0].issues : undefined;
}

/**
 * Appends one `PATH: MESSAGE` string per problem, the path prefixed with `base`. With the
 * `schema` the issues came from (and the `data` checked), an unknown key gets the closest
 * allowed key as a suggestion.
 */
export function issueStrings(
  issues: readonly z.ZodIssue[],
  base: Path,
  out: string[],
  schema?: z.ZodTypeAny,
  data?: unknown,
): void {
  for (const issue of issues) {
    const at = formatPath([...base, ...issue.path]);
    if (issue.code === "unrecognized_keys") {
      const known = schema === undefined ? [] : keysAt(schema, issue.path, data);
      for (const key of issue.keys) out.push(`${at}: ${unknownKeyMessage(key, known)}`);
    } else if (issue.code === "invalid_union") {
      const branch = unionBranch(issue);
      if (branch !== undefined) issueStrings(branch, base, out, schema, data);
      else out.push(`${at}: ${issue.message}`);
    } else {
      out.push(`${at}: ${issue.message}`);
    }
  }
}

/**
 * Parses one unit of the document; on failure appends its problems to `errors` and returns
 * undefined, so that the other units are still checked and all errors reported at once.
 */
export function parseUnit<S extends z.ZodTypeAny>(
  schema: S,
  value: unknown,
  base: Path,
  errors: string[],
): z.output<S> | undefined {
  const result = schema.safeParse(value, { errorMap });
  if (result.success) return result.data;
  issueStrings(result.error.issues, base, errors, schema, value);
  return undefined;
}
