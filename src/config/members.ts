/**
 * Member list validation shared by the configuration loader (`upstreams.NAME.members`) and
 * the admin API (`PUT /v1/upstreams/{name}` with `{"members": [...]}`).
 */
import { unknownKeyMessage } from "./suggest.ts";
import { parseMemberAddress } from "./address.ts";
import { ValueError } from "./errors.ts";
import type { MemberAddress } from "../net/mod.ts";
import type { MemberConfig } from "./types.ts";

/** A pool holds at most this many members. */
export const MAX_MEMBERS = 10_000;

/** The outcome of a validation: `members` is set exactly when `errors` is empty. */
export interface MembersResult {
  readonly members?: readonly MemberConfig[];
  readonly errors: readonly string[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Validates a member list: entries `{address: string, weight?: integer 1..1000, max_conns?:
 * integer 1..10000}` (weight default 1, no other keys; `max_conns` for FastCGI pools), no two with the same canonical address, at most 10,000.
 * `path` prefixes every message: `upstreams.api` gives
 * `upstreams.api.members[1].weight: must be between 1 and 1000`, `""` gives
 * `members[1].weight: ...`. The returned members and their addresses are frozen.
 */
export function validateMembers(value: unknown, path: string): MembersResult {
  const base = path === "" ? "members" : `${path}.members`;
  if (!Array.isArray(value)) return { errors: [`${base}: must be a list`] };
  if (value.length > MAX_MEMBERS) {
    return { errors: [`${base}: at most ${MAX_MEMBERS} members allowed`] };
  }
  const errors: string[] = [];
  const members: MemberConfig[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < value.length; i++) {
    const entry: unknown = value[i];
    const at = `${base}[${i}]`;
    if (!isRecord(entry)) {
      errors.push(`${at}: must be a mapping {address, weight}`);
      continue;
    }
    for (const key in entry) {
      if (key !== "address" && key !== "weight" && key !== "max_conns") {
        errors.push(`${at}: ${unknownKeyMessage(key, ["address", "weight", "max_conns"])}`);
      }
    }
    const address = entry.address;
    let parsed: MemberAddress | undefined;
    if (address === undefined) {
      errors.push(`${at}.address: is required`);
    } else if (typeof address !== "string") {
      errors.push(`${at}.address: must be a string`);
    } else {
      try {
        parsed = parseMemberAddress(address);
      } catch (e) {
        if (!(e instanceof ValueError)) throw e;
        errors.push(`${at}.address: ${e.message}`);
      }
    }
    const weight = entry.weight === undefined ? 1 : entry.weight;
    if (typeof weight !== "number" || !Number.isInteger(weight)) {
      errors.push(`${at}.weight: must be an integer`);
    } else if (weight < 1 || weight > 1000) {
      errors.push(`${at}.weight: must be between 1 and 1000`);
    }
    const maxConns = entry.max_conns;
    if (maxConns !== undefined) {
      if (typeof maxConns !== "number" || !Number.isInteger(maxConns)) {
        errors.push(`${at}.max_conns: must be an integer`);
      } else if (maxConns < 1 || maxConns > 10_000) {
        errors.push(`${at}.max_conns: must be between 1 and 10000`);
      }
    }
    if (parsed === undefined) continue;
    if (seen.has(parsed.canonical)) {
      errors.push(`${at}.address: duplicate member "${parsed.canonical}"`);
      continue;
    }
    seen.add(parsed.canonical);
    // Once anything is wrong no list is returned, so stop building one.
    if (errors.length === 0) {
      members.push(
        Object.freeze(
          maxConns === undefined
            ? { address: parsed.canonical, parsed: Object.freeze(parsed), weight: weight as number }
            : {
              address: parsed.canonical,
              parsed: Object.freeze(parsed),
              weight: weight as number,
              max_conns: maxConns as number,
            },
        ),
      );
    }
  }
  return errors.length === 0 ? { members, errors } : { errors };
}

/**
 * Rules that need the pool's settings: a `unix:` member is allowed only as the single member
 * of a plain-HTTP pool; a `protocol: fastcgi` pool may have several (one socket per PHP-FPM
 * pool is the usual layout). For the loader and for the admin API after `validateMembers`.
 */
export function poolMemberErrors(
  members: readonly MemberConfig[],
  scheme: "http" | "https",
  path: string,
  protocol: "http" | "fastcgi" = "http",
): string[] {
  const base = path === "" ? "members" : `${path}.members`;
  const errors: string[] = [];
  if (protocol === "fastcgi") return errors;
  for (let i = 0; i < members.length; i++) {
    if (members[i].parsed.kind !== "unix") continue;
    if (scheme !== "http") {
      errors.push(`${base}[${i}].address: a unix: member is only allowed with scheme: http`);
    } else if (members.length > 1) {
      errors.push(`${base}[${i}].address: a unix: member must be the only member of its pool`);
    }
  }
  return errors;
}

/**
 * Validates an admin API body: it must be `{"members": [...]}` and nothing else
 * (`body: must be {"members": [...]}`, `body: unknown key "x"`); entry messages are those of
 * `validateMembers` with an empty path (`members[1].weight: must be between 1 and 1000`).
 */
export function validateMembersBody(body: unknown): MembersResult {
  if (!isRecord(body) || !Array.isArray(body.members)) {
    return { errors: ['body: must be {"members": [...]}'] };
  }
  const extra: string[] = [];
  for (const key in body) if (key !== "members") extra.push(`body: unknown key "${key}"`);
  if (extra.length > 0) return { errors: extra };
  return validateMembers(body.members, "");
}
