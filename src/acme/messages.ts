/**
 * Parsers of the ACME server's JSON objects (RFC 8555 §7.1): directory, order, authorization,
 * challenge, problem. Each takes the text as received and returns a frozen, typed object or
 * throws `AcmeProtocolError` naming what it refused: bad JSON, a missing or mistyped field,
 * a status RFC 8555 does not define. Fields the client does not use are ignored.
 */
import { AcmeProtocolError } from "./errors.ts";

export interface Directory {
  readonly newNonce: string;
  readonly newAccount: string;
  readonly newOrder: string;
  /** Whether the server requires external account binding (not supported here). */
  readonly externalAccountRequired: boolean;
}

export type OrderStatus = "pending" | "ready" | "processing" | "valid" | "invalid";
export type AuthorizationStatus =
  | "pending"
  | "valid"
  | "invalid"
  | "deactivated"
  | "expired"
  | "revoked";
export type ChallengeStatus = "pending" | "processing" | "valid" | "invalid";

export interface Problem {
  readonly type: string;
  readonly detail: string;
}

export interface Order {
  readonly status: OrderStatus;
  readonly authorizations: readonly string[];
  readonly finalize: string;
  readonly certificate?: string;
  readonly error?: Problem;
}

export interface Challenge {
  readonly type: string;
  readonly url: string;
  readonly status: ChallengeStatus;
  /** Present for http-01 (and dns-01, tls-alpn-01). */
  readonly token?: string;
  readonly error?: Problem;
}

export interface Authorization {
  readonly status: AuthorizationStatus;
  readonly identifier: { readonly type: string; readonly value: string };
  readonly challenges: readonly Challenge[];
  readonly wildcard: boolean;
}

type Obj = Record<string, unknown>;

function json(text: string, what: string): Obj {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new AcmeProtocolError(`${what}: not JSON: ${JSON.stringify(text.slice(0, 80))}`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new AcmeProtocolError(`${what}: not a JSON object`);
  }
  return v as Obj;
}

function str(o: Obj, key: string, what: string): string {
  const v = o[key];
  if (typeof v !== "string" || v === "") {
    throw new AcmeProtocolError(
      `${what}: "${key}" ${v === undefined ? "is missing" : "must be a non-empty string"}`,
    );
  }
  return v;
}

function url(o: Obj, key: string, what: string): string {
  const v = str(o, key, what);
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new AcmeProtocolError(
      `${what}: "${key}" is not a URL: ${JSON.stringify(v.slice(0, 80))}`,
    );
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") {
    throw new AcmeProtocolError(`${what}: "${key}" must be an http(s) URL`);
  }
  return v;
}

function oneOf<T extends string>(o: Obj, key: string, allowed: readonly T[], what: string): T {
  const v = str(o, key, what);
  if (!(allowed as readonly string[]).includes(v)) {
    throw new AcmeProtocolError(`${what}: unknown ${key} "${v.slice(0, 40)}"`);
  }
  return v as T;
}

function problemOf(v: unknown, what: string): Problem | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new AcmeProtocolError(`${what}: "error" must be an object`);
  }
  const o = v as Obj;
  const type = o.type === undefined ? "" : o.type;
  const detail = o.detail === undefined ? "" : o.detail;
  if (typeof type !== "string" || typeof detail !== "string") {
    throw new AcmeProtocolError(`${what}: "error" type and detail must be strings`);
  }
  return Object.freeze({ type, detail });
}

/** A directory object: the three URLs the client uses, and whether EAB is required. */
export function parseDirectory(text: string): Directory {
  const what = "directory";
  const o = json(text, what);
  const meta = o.meta;
  if (meta !== undefined && (typeof meta !== "object" || meta === null || Array.isArray(meta))) {
    throw new AcmeProtocolError(`${what}: "meta" must be an object`);
  }
  const ear = (meta as Obj | undefined)?.externalAccountRequired;
  if (ear !== undefined && typeof ear !== "boolean") {
    throw new AcmeProtocolError(`${what}: "meta.externalAccountRequired" must be a boolean`);
  }
  return Object.freeze({
    newNonce: url(o, "newNonce", what),
    newAccount: url(o, "newAccount", what),
    newOrder: url(o, "newOrder", what),
    externalAccountRequired: ear === true,
  });
}

const ORDER: readonly OrderStatus[] = ["pending", "ready", "processing", "valid", "invalid"];

/** An order object; `certificate` is required once it is `valid`. */
export function parseOrder(text: string): Order {
  const what = "order";
  const o = json(text, what);
  const status = oneOf(o, "status", ORDER, what);
  const authz = o.authorizations;
  if (!Array.isArray(authz) || authz.length === 0) {
    throw new AcmeProtocolError(`${what}: "authorizations" must be a non-empty array`);
  }
  const authorizations = authz.map((_, i) =>
    url(authz as unknown as Obj, String(i), `${what} authorizations`)
  );
  const finalize = url(o, "finalize", what);
  const certificate = o.certificate === undefined ? undefined : url(o, "certificate", what);
  if (status === "valid" && certificate === undefined) {
    throw new AcmeProtocolError(`${what}: valid but "certificate" is missing`);
  }
  const error = problemOf(o.error, what);
  return Object.freeze({
    status,
    authorizations: Object.freeze(authorizations),
    finalize,
    ...(certificate !== undefined ? { certificate } : {}),
    ...(error !== undefined ? { error } : {}),
  });
}

const CHALLENGE: readonly ChallengeStatus[] = ["pending", "processing", "valid", "invalid"];

/** A challenge object; a token must be base64url text (it becomes a URL path segment). */
export function parseChallenge(v: unknown, what = "challenge"): Challenge {
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new AcmeProtocolError(`${what}: not a JSON object`);
  }
  const o = v as Obj;
  const type = str(o, "type", what);
  const status = oneOf(o, "status", CHALLENGE, what);
  const u = url(o, "url", what);
  let token: string | undefined;
  if (o.token !== undefined) {
    token = str(o, "token", what);
    if (!/^[A-Za-z0-9_-]+$/.test(token)) {
      throw new AcmeProtocolError(`${what}: "token" must be base64url text`);
    }
  }
  const error = problemOf(o.error, what);
  return Object.freeze({
    type,
    url: u,
    status,
    ...(token !== undefined ? { token } : {}),
    ...(error !== undefined ? { error } : {}),
  });
}

const AUTHZ: readonly AuthorizationStatus[] = [
  "pending",
  "valid",
  "invalid",
  "deactivated",
  "expired",
  "revoked",
];

/** An authorization object with its challenges. */
export function parseAuthorization(text: string): Authorization {
  const what = "authorization";
  const o = json(text, what);
  const status = oneOf(o, "status", AUTHZ, what);
  const id = o.identifier;
  if (typeof id !== "object" || id === null || Array.isArray(id)) {
    throw new AcmeProtocolError(`${what}: "identifier" must be an object`);
  }
  const identifier = Object.freeze({
    type: str(id as Obj, "type", `${what} identifier`),
    value: str(id as Obj, "value", `${what} identifier`),
  });
  const list = o.challenges;
  if (!Array.isArray(list)) {
    throw new AcmeProtocolError(`${what}: "challenges" must be an array`);
  }
  const challenges = list.map((c, i) => parseChallenge(c, `${what} challenges[${i}]`));
  if (o.wildcard !== undefined && typeof o.wildcard !== "boolean") {
    throw new AcmeProtocolError(`${what}: "wildcard" must be a boolean`);
  }
  return Object.freeze({
    status,
    identifier,
    challenges: Object.freeze(challenges),
    wildcard: o.wildcard === true,
  });
}

/** A problem document (`application/problem+json`). */
export function parseProblem(text: string): Problem {
  return problemOf(json(text, "problem"), "problem")!;
}
