/**
 * `policies:` lists of applications and routes (and a listener's `redirect`). Each entry is a
 * mapping with one key naming the policy; each is parsed on its own so that every error of
 * the list is reported at once. Files a policy names (`users_file`, error pages) are read
 * here, at load, so `scalwsd check` and a reload see them as a request would.
 */
import { join } from "node:path";
import { z } from "zod";
import { HOP_BY_HOP } from "../base/mod.ts";
import { cidrError } from "../net/mod.ts";
import { ValueError } from "./errors.ts";
import { formatPath, parseUnit, type Path } from "./issues.ts";
import { checkPattern } from "./regex_safety.ts";
import { parseSize } from "./size.ts";
import {
  checked,
  duration,
  flag,
  int,
  leaf,
  oneOf,
  routePath,
  string,
  text,
  token,
} from "./schema.ts";
import { parseTemplate } from "./parse_template.ts";
import type {
  BasicAuthPolicy,
  CompressPolicy,
  CorsPolicy,
  ErrorPage,
  ErrorPagesPolicy,
  HeaderEdits,
  HeadersPolicy,
  PolicyConfig,
  RedirectPolicy,
  RewritePolicy,
} from "./types.ts";

/** Policy names, in the order docs/routing.md lists them. */
export const POLICY_NAMES = [
  "rewrite",
  "redirect",
  "headers",
  "cors",
  "basic_auth",
  "allow",
  "deny",
  "compress",
  "error_pages",
] as const;

/** Largest error page file. */
export const MAX_ERROR_PAGE = 65_536;
/** Default `basic_auth.cache_ttl`: 5 minutes. */
export const DEFAULT_AUTH_CACHE_TTL = 300_000;
/** Default `compress.types`. */
export const DEFAULT_COMPRESS_TYPES = [
  "text/*",
  "application/json",
  "application/javascript",
  "application/xml",
  "application/xhtml+xml",
  "application/rss+xml",
  "application/atom+xml",
  "application/manifest+json",
  "application/wasm",
  "image/svg+xml",
] as const;

/**
 * Headers that describe one connection, not the message (RFC 9110 7.6.1), and framing headers
 * scalwsd writes itself: never set, added or removed by a `headers` policy.
 */
const NOT_EDITABLE = new Set([
  ...HOP_BY_HOP,
  "proxy-authenticate",
  "proxy-authorization",
  "content-length",
]);

/** Reads a file by its resolved path (tests inject one). */
export type ReadFile = (path: string) => Uint8Array;

/** What provisioning a policy list needs beyond the list. */
export interface PolicyContext {
  /** Directory that relative file names are resolved against (of the file naming them). */
  readonly dir: string;
  readonly readFile: ReadFile;
  readonly errors: string[];
  readonly warnings: string[];
}

/**
 * `dir` joined with `file` unless `file` is absolute, normalized (`./` and `a/..` steps gone), so
 * errors show the path as an operator would write it.
 */
export function resolveFile(dir: string, file: string): string {
  if (file.startsWith("/")) return file;
  return join(dir === "" ? "." : dir, file);
}

/** Control characters (a template or realm must not hold them). */
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/;

/** `v` as a template with `$host`, `$path`, ... (or `$1`..`$9` when `groups` >= 0). */
function templateOf(v: unknown, groups: number): string {
  const s = string(v);
  if (CONTROL.test(s)) throw new ValueError("control characters are not allowed");
  const parts = parseTemplate(s, groups);
  if (typeof parts === "string") throw new ValueError(parts);
  return s;
}

function template(groups = -1) {
  return leaf((v) => templateOf(v, groups));
}

const method = () =>
  checked((s) =>
    /^[A-Z]+$/.test(s)
      ? undefined
      : /^[A-Za-z]+$/.test(s)
      ? `invalid method "${s}": methods are upper case (${s.toUpperCase()})`
      : `invalid method "${s}"`
  );

const rewriteSchema = z.object({
  strip_prefix: routePath().optional(),
  prefix: z.object({ from: routePath(), to: routePath() }).strict().optional(),
  regex: z.object({ match: text(), to: text() }).strict().optional(),
}).strict();

/** A redirect's target: a template that makes a URL (no spaces, printable ASCII). */
function urlTemplate() {
  return leaf((v) => {
    const s = templateOf(v, -1);
    const bad = /[^\x21-\x7e]/.exec(s);
    if (bad !== null) {
      throw new ValueError(
        `${JSON.stringify(bad[0])} is not allowed in a URL; percent-encode it (a space is %20)`,
      );
    }
    return s;
  });
}

const redirectSchema = z.object({
  to: urlTemplate(),
  status: leaf((v) => {
    if (v === 301 || v === 302 || v === 303 || v === 307 || v === 308) return v;
    throw new ValueError("must be one of 301, 302, 303, 307, 308");
  }).optional(),
}).strict();

const editsSchema = z.object({
  set: z.record(token(), template()).optional(),
  add: z.record(token(), template()).optional(),
  remove: z.array(token()).optional(),
}).strict();

const headersSchema = z.object({
  request: editsSchema.optional(),
  response: editsSchema.optional(),
}).strict();

const originPattern = () =>
  checked((s) => {
    if (s === "*") return undefined;
    const m = /^(https?):\/\/(\*\.)?([a-z0-9-]+(\.[a-z0-9-]+)*)(:[0-9]{1,5})?$/.exec(s);
    if (m === null) {
      return `invalid origin "${s}": use "scheme://host[:port]", "scheme://*.domain" or "*"`;
    }
    const port = m[5] === undefined ? 1 : Number(m[5].slice(1));
    if (port < 1 || port > 65535) return `invalid origin "${s}": the port must be 1 to 65535`;
    return undefined;
  }, true);

/**
 * An origin as browsers send it (RFC 6454 serialisation): without its scheme's default port, so
 * that `https://a.example:443` matches the `Origin: https://a.example` a browser sends.
 */
function browserOrigin(o: string): string {
  if (o.startsWith("https://") && o.endsWith(":443")) return o.slice(0, -4);
  if (o.startsWith("http://") && o.endsWith(":80")) return o.slice(0, -3);
  return o;
}

const corsSchema = z.object({
  origins: z.array(originPattern()).min(1, "at least one origin is required"),
  methods: z.array(method()).optional(),
  headers: z.array(token()).optional(),
  expose_headers: z.array(token()).optional(),
  credentials: flag().optional(),
  max_age: duration().optional(),
}).strict();

const basicAuthSchema = z.object({
  realm: checked((s) =>
    s === ""
      ? "must not be empty"
      : CONTROL.test(s) || s.includes('"') || s.includes("\\")
      ? 'must not contain ", \\ or control characters'
      : undefined
  ).optional(),
  users_file: text(),
  pass_credentials: flag().optional(),
  cache_ttl: duration().optional(),
}).strict();

const cidrList = z.array(checked(cidrError)).min(1, "at least one address is required");

const compressSchema = z.object({
  encodings: z.array(oneOf(["br", "gzip"])).min(1, "at least one encoding is required")
    .optional(),
  level: int(1, 9).optional(),
  brotli_level: int(0, 11).optional(),
  min_size: leaf((v) => {
    if (typeof v !== "string" && typeof v !== "number") {
      throw new ValueError('must be a size such as "1KiB"');
    }
    return parseSize(v); // 0 is allowed: compress every eligible body
  }).optional(),
  types: z.array(
    checked(
      (s) =>
        /^[a-z0-9!#$&^_.+-]+\/([a-z0-9!#$&^_.+-]+|\*)$/.test(s)
          ? undefined
          : `invalid media type "${s}": use "type/subtype" or "type/*"`,
      true,
    ),
  ).min(1, "at least one type is required").optional(),
}).strict();

/** Checks one policy's value against its schema. */
export const POLICY_SCHEMAS = {
  rewrite: rewriteSchema,
  redirect: redirectSchema,
  headers: headersSchema,
  cors: corsSchema,
  basic_auth: basicAuthSchema,
  allow: cidrList,
  deny: cidrList,
  compress: compressSchema,
} as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Provisions a `policies:` list at `at`. Returns the policies, or undefined when any entry
 * has an error (all of them are reported).
 */
export function provisionPolicies(
  value: unknown,
  at: Path,
  ctx: PolicyContext,
): PolicyConfig[] | undefined {
  if (value === undefined) return [];
  const path = formatPath(at);
  if (!Array.isArray(value)) {
    ctx.errors.push(`${path}: must be a list`);
    return undefined;
  }
  const before = ctx.errors.length;
  const out: PolicyConfig[] = [];
  for (let i = 0; i < value.length; i++) {
    const entry = value[i];
    const p = `${path}[${i}]`;
    if (!isRecord(entry)) {
      ctx.errors.push(`${p}: must be a mapping with one key naming the policy`);
      continue;
    }
    const keys = Object.keys(entry);
    if (keys.length !== 1) {
      ctx.errors.push(
        `${p}: must have exactly one key naming the policy, found ${
          keys.length === 0 ? "none" : keys.join(", ")
        }`,
      );
      continue;
    }
    const policy = provisionPolicy(keys[0], entry[keys[0]], [...at, i, keys[0]], ctx);
    if (policy !== undefined) out.push(policy);
  }
  return ctx.errors.length === before ? out : undefined;
}

/** One policy `name: value` at `at` (the path of the value). */
export function provisionPolicy(
  name: string,
  value: unknown,
  at: Path,
  ctx: PolicyContext,
): PolicyConfig | undefined {
  const path = formatPath(at);
  if (name === "error_pages") return errorPages(value, path, ctx);
  if (!(name in POLICY_SCHEMAS)) {
    const p = formatPath(at.slice(0, -1));
    ctx.errors.push(`${p}: unknown policy "${name}"; must be one of ${POLICY_NAMES.join(", ")}`);
    return undefined;
  }
  const raw = parseUnit(POLICY_SCHEMAS[name as keyof typeof POLICY_SCHEMAS], value, at, ctx.errors);
  if (raw === undefined) return undefined;
  switch (name) {
    case "rewrite":
      return rewrite(raw as z.output<typeof rewriteSchema>, path, ctx);
    case "redirect":
      return redirect(raw as z.output<typeof redirectSchema>);
    case "headers":
      return headers(raw as z.output<typeof headersSchema>, path, ctx);
    case "cors":
      return cors(raw as z.output<typeof corsSchema>, path, ctx);
    case "basic_auth":
      return basicAuth(raw as z.output<typeof basicAuthSchema>, path, ctx);
    case "allow":
    case "deny":
      return { policy: name, cidrs: raw as string[] };
    case "compress":
      return compress(raw as z.output<typeof compressSchema>);
  }
  return undefined;
}

/** A listener's `redirect` (the whole-listener `http -> https` answer). */
export function provisionRedirect(value: unknown, at: Path, errors: string[]) {
  const raw = parseUnit(redirectSchema, value, at, errors);
  return raw === undefined ? undefined : redirect(raw);
}

function rewrite(
  raw: z.output<typeof rewriteSchema>,
  path: string,
  ctx: PolicyContext,
): RewritePolicy | undefined {
  const forms = [raw.strip_prefix, raw.prefix, raw.regex].filter((f) => f !== undefined);
  if (forms.length !== 1) {
    ctx.errors.push(`${path}: exactly one of strip_prefix, prefix and regex is required`);
    return undefined;
  }
  if (raw.strip_prefix !== undefined) {
    if (raw.strip_prefix === "/") {
      ctx.errors.push(`${path}.strip_prefix: stripping "/" changes nothing`);
      return undefined;
    }
    return { policy: "rewrite", strip_prefix: raw.strip_prefix };
  }
  if (raw.prefix !== undefined) {
    if (raw.prefix.from === raw.prefix.to) {
      ctx.errors.push(`${path}.prefix: from and to are the same ("${raw.prefix.from}")`);
      return undefined;
    }
    return { policy: "rewrite", prefix: { ...raw.prefix } };
  }
  const { match, to } = raw.regex!;
  const info = checkPattern(match);
  if (typeof info === "string") {
    ctx.errors.push(`${path}.regex.match: ${info}`);
    return undefined;
  }
  const parts = parseTemplate(to, info.groups);
  if (typeof parts === "string") {
    ctx.errors.push(`${path}.regex.to: ${parts}`);
    return undefined;
  }
  if (!to.startsWith("/")) {
    ctx.errors.push(`${path}.regex.to: must start with "/"`);
    return undefined;
  }
  // The result is the target sent to the member: a space or "#" would break or cut it.
  const bad = /[^\x21-\x7e]|#/.exec(to);
  if (bad !== null) {
    ctx.errors.push(
      `${path}.regex.to: ${JSON.stringify(bad[0])} is not allowed in a request target; ` +
        `percent-encode it (a space is %20)`,
    );
    return undefined;
  }
  return { policy: "rewrite", regex: { match, to } };
}

function redirect(raw: z.output<typeof redirectSchema>): RedirectPolicy {
  return { policy: "redirect", to: raw.to, status: raw.status ?? 308 };
}

function edits(
  raw: z.output<typeof editsSchema> | undefined,
  path: string,
  request: boolean,
  ctx: PolicyContext,
): HeaderEdits {
  const lower = (r: Record<string, string> | undefined) =>
    Object.fromEntries(Object.entries(r ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const out = {
    set: lower(raw?.set),
    add: lower(raw?.add),
    remove: (raw?.remove ?? []).map((n) => n.toLowerCase()),
  };
  const check = (op: string, name: string, shown: string) => {
    const at = op === "remove" ? `${path}.remove` : `${path}.${op}.${shown}`;
    if (NOT_EDITABLE.has(name)) {
      ctx.errors.push(`${at}: "${shown}" is a hop-by-hop or framing header and cannot be changed`);
    } else if (name === "host") {
      if (!request) ctx.errors.push(`${at}: Host is a request header`);
      else if (op !== "set") {
        ctx.errors.push(
          `${at}: Host can only be replaced (request.set.Host) or kept with preserve_host`,
        );
      }
    }
  };
  for (const k of Object.keys(raw?.set ?? {})) check("set", k.toLowerCase(), k);
  for (const k of Object.keys(raw?.add ?? {})) check("add", k.toLowerCase(), k);
  for (const k of raw?.remove ?? []) check("remove", k.toLowerCase(), k);
  return out;
}

function headers(
  raw: z.output<typeof headersSchema>,
  path: string,
  ctx: PolicyContext,
): HeadersPolicy | undefined {
  const before = ctx.errors.length;
  const request = edits(raw.request, `${path}.request`, true, ctx);
  const response = edits(raw.response, `${path}.response`, false, ctx);
  if (ctx.errors.length !== before) return undefined;
  return { policy: "headers", request, response };
}

function cors(
  raw: z.output<typeof corsSchema>,
  path: string,
  ctx: PolicyContext,
): CorsPolicy | undefined {
  const credentials = raw.credentials ?? false;
  if (credentials && raw.origins.includes("*")) {
    ctx.errors.push(
      `${path}.credentials: not allowed with origins "*"; list the origins that may send credentials`,
    );
    return undefined;
  }
  if (raw.max_age !== undefined && raw.max_age % 1000 !== 0) {
    ctx.errors.push(`${path}.max_age: must be a whole number of seconds`);
    return undefined;
  }
  return {
    policy: "cors",
    origins: [...new Set(raw.origins.map(browserOrigin))],
    methods: [...new Set(raw.methods ?? ["GET", "HEAD", "POST"])],
    headers: [...new Set((raw.headers ?? []).map((h) => h.toLowerCase()))],
    expose_headers: [...new Set((raw.expose_headers ?? []).map((h) => h.toLowerCase()))],
    credentials,
    ...(raw.max_age !== undefined ? { max_age: raw.max_age / 1000 } : {}),
  };
}

const BCRYPT = /^\$2[aby]\$([0-9]{2})\$[./A-Za-z0-9]{53}$/;

/** Parses htpasswd text into user -> bcrypt hash, with errors naming the line. */
export function parseHtpasswd(text: string): { users: Record<string, string>; errors: string[] } {
  const users: Record<string, string> = {};
  const errors: string[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, "");
    if (line.trim() === "" || line.startsWith("#")) continue;
    const colon = line.indexOf(":");
    const at = `line ${i + 1}`;
    if (colon <= 0) {
      errors.push(`${at}: expected "user:hash"`);
      continue;
    }
    const user = line.slice(0, colon);
    const hash = line.slice(colon + 1);
    if (Object.hasOwn(users, user)) {
      errors.push(`${at}: duplicate user "${user}"`);
    } else if (hash.startsWith("{SHA}")) {
      errors.push(
        `${at}: user "${user}": {SHA} hashes (unsalted SHA-1) are refused; ` +
          `use bcrypt (htpasswd -B)`,
      );
    } else if (hash.startsWith("$apr1$") || hash.startsWith("$1$")) {
      errors.push(`${at}: user "${user}": MD5 hashes are refused; use bcrypt (htpasswd -B)`);
    } else {
      const m = BCRYPT.exec(hash);
      if (m === null) {
        errors.push(
          `${at}: user "${user}": not a bcrypt hash ($2y$ or $2b$); use bcrypt (htpasswd -B)`,
        );
      } else if (Number(m[1]) < 4 || Number(m[1]) > 31) {
        errors.push(`${at}: user "${user}": bcrypt cost must be between 04 and 31`);
      } else users[user] = hash;
    }
  }
  return { users, errors };
}

function readText(ctx: PolicyContext, file: string, at: string, max = Infinity): string | null {
  let bytes: Uint8Array;
  try {
    bytes = ctx.readFile(resolveFile(ctx.dir, file));
  } catch (e) {
    ctx.errors.push(`${at}: cannot read "${file}": ${(e as Error).message}`);
    return null;
  }
  if (bytes.length > max) {
    ctx.errors.push(`${at}: "${file}" is larger than ${max / 1024} KiB`);
    return null;
  }
  return new TextDecoder().decode(bytes);
}

function basicAuth(
  raw: z.output<typeof basicAuthSchema>,
  path: string,
  ctx: PolicyContext,
): BasicAuthPolicy | undefined {
  const text = readText(ctx, raw.users_file, `${path}.users_file`);
  if (text === null) return undefined;
  const { users, errors } = parseHtpasswd(text);
  for (const e of errors) ctx.errors.push(`${path}.users_file: "${raw.users_file}" ${e}`);
  if (errors.length > 0) return undefined;
  if (Object.keys(users).length === 0) {
    ctx.errors.push(`${path}.users_file: "${raw.users_file}" holds no users`);
    return undefined;
  }
  return {
    policy: "basic_auth",
    realm: raw.realm ?? "Restricted",
    users_file: raw.users_file,
    users,
    pass_credentials: raw.pass_credentials ?? false,
    cache_ttl: raw.cache_ttl ?? DEFAULT_AUTH_CACHE_TTL,
  };
}

function compress(raw: z.output<typeof compressSchema>): CompressPolicy {
  return {
    policy: "compress",
    encodings: [...new Set(raw.encodings ?? (["br", "gzip"] as const))],
    level: raw.level ?? 6,
    brotli_level: raw.brotli_level ?? 4,
    min_size: raw.min_size ?? 1024,
    types: raw.types ?? [...DEFAULT_COMPRESS_TYPES],
  };
}

const PAGE_TYPES: Readonly<Record<string, string>> = {
  html: "text/html; charset=utf-8",
  htm: "text/html; charset=utf-8",
  json: "application/json",
  txt: "text/plain; charset=utf-8",
  xml: "application/xml",
};

function errorPages(
  value: unknown,
  path: string,
  ctx: PolicyContext,
): ErrorPagesPolicy | undefined {
  if (!isRecord(value)) {
    ctx.errors.push(`${path}: must be a mapping`);
    return undefined;
  }
  const before = ctx.errors.length;
  const pages: Record<number, ErrorPage> = {};
  let intercept = false;
  for (const key of Object.keys(value)) {
    const v = value[key];
    const at = `${path}.${key}`;
    if (key === "intercept") {
      if (typeof v !== "boolean") ctx.errors.push(`${at}: must be true or false`);
      else intercept = v;
      continue;
    }
    if (!/^[0-9]{3}$/.test(key) || Number(key) < 400 || Number(key) > 599) {
      ctx.errors.push(`${path}: unknown key "${key}"; use a status from 400 to 599 or intercept`);
      continue;
    }
    if (typeof v !== "string" || v === "") {
      ctx.errors.push(`${at}: must be a file name`);
      continue;
    }
    const body = readText(ctx, v, at, MAX_ERROR_PAGE);
    if (body === null) continue;
    const ext = v.slice(v.lastIndexOf(".") + 1).toLowerCase();
    pages[Number(key)] = {
      file: v,
      body,
      content_type: PAGE_TYPES[ext] ?? "text/html; charset=utf-8",
    };
  }
  if (ctx.errors.length !== before) return undefined;
  if (Object.keys(pages).length === 0) {
    ctx.errors.push(`${path}: at least one page is required`);
    return undefined;
  }
  return { policy: "error_pages", pages, intercept };
}
