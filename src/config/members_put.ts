/**
 * The checks of `PUT /v1/upstreams/{name}` that depend only on the configuration and the body:
 * one place for an instance's admin API and the controller's control socket, so both answer
 * with the same statuses and messages.
 */
import { poolMemberErrors, validateMembersBody } from "./members.ts";
import type { MemberConfig, PoolConfig } from "./types.ts";

/** Bodies of a member `PUT` are capped at 2 MiB (`413`). */
export const MAX_MEMBERS_BODY = 2 * 1024 * 1024;

/** A refused `PUT`: its status and message. */
export interface PutRefusal {
  readonly status: 400 | 404 | 409 | 413;
  readonly error: string;
}

/**
 * The header the controller sends with the member lists it owns; an instance under the
 * controller refuses a member `PUT` without it (`409`, naming the control socket).
 */
export const CONTROLLER_PUT_HEADER = "x-scalws-controller";

/** `413` message. */
export const BODY_TOO_LARGE = `body is larger than ${MAX_MEMBERS_BODY} bytes`;

/**
 * Whether pool `name` (`pool`, undefined when the configuration has none) takes a member `PUT`:
 * `404` unknown pool, `409` a file or dns pool; undefined when it does.
 */
export function putTargetError(name: string, pool: PoolConfig | undefined): PutRefusal | undefined {
  if (pool === undefined) return { status: 404, error: `no pool named "${name}"` };
  if (pool.members_from === "dns") {
    return { status: 409, error: `pool "${name}" has members_from: dns; its members follow DNS` };
  }
  if (pool.members_from !== "api") {
    return {
      status: 409,
      error: `pool "${name}" has members_from: file; change its members in the configuration`,
    };
  }
  return undefined;
}

/**
 * Checks the body text of a `PUT` to api pool `pool`: `400` for invalid JSON (`body: invalid
 * JSON`), a body other than `{"members": [...]}`, or invalid members (every message, one per
 * line, as `members[1].weight: must be between 1 and 1000`).
 */
export function checkMembersBody(
  text: string,
  pool: PoolConfig,
): { readonly members: readonly MemberConfig[] } | PutRefusal {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { status: 400, error: "body: invalid JSON" };
  }
  const { members, errors } = validateMembersBody(body);
  if (errors.length > 0 || members === undefined) {
    return { status: 400, error: errors.join("\n") };
  }
  const rules = poolMemberErrors(members, pool.scheme, "", pool.protocol);
  // As the configuration file: a connection limit per member is FastCGI's (its queue's).
  if (pool.protocol !== "fastcgi") {
    members.forEach((m, i) => {
      if (m.max_conns !== undefined) {
        rules.push(`members[${i}].max_conns: only allowed with protocol: fastcgi`);
      }
    });
  }
  if (rules.length > 0) return { status: 400, error: rules.join("\n") };
  return { members };
}
