/**
 * The member lists of `members_from: api` pools kept on disk (`server.state_dir`), so that a
 * restarted scalwsd serves the list the last accepted `PUT` set instead of the file's seed.
 *
 * One file per pool, `<dir>/upstreams/<pool>.json`, mode 0600, replaced atomically (temporary
 * file, fsync, rename, fsync of the directory):
 *
 *     {"pool": "api", "updated": "2026-12-01T12:00:00.000Z",
 *      "members": [{"address": "127.0.0.1:8080", "weight": 1}]}
 *
 * Reading checks the file as strictly as a `PUT` body: anything else is a `MemberStateError`
 * that the caller reports and ignores.
 */
import { ensureDir, writeFileAtomic } from "../base/mod.ts";
import { type MemberConfig, poolMemberErrors, validateMembers } from "../config/mod.ts";

/** A state file that exists but cannot be used; the pool starts from the configuration. */
export class MemberStateError extends Error {}

/** A pool's recorded list and when it was recorded (ms since the epoch). */
export interface StoredMembers {
  readonly members: readonly MemberConfig[];
  readonly updated: number;
}

const KEYS = new Set(["pool", "updated", "members"]);

/** Reads and writes the member state files under one state directory. */
export class MemberState {
  constructor(readonly dir: string) {}

  /** The file of `pool`. Pool names follow the name rule, so they are safe file names. */
  file(pool: string): string {
    return `${this.dir}/upstreams/${pool}.json`;
  }

  /** Records `members` of `pool` at `now`; resolves once the file is durable. */
  async save(pool: string, members: readonly MemberConfig[], now: number): Promise<void> {
    await ensureDir(`${this.dir}/upstreams`);
    await writeFileAtomic(this.file(pool), encodeMembers(pool, members, now));
  }

  /**
   * The recorded list of `pool`, checked against the pool's `scheme`; `undefined` when no
   * file exists. Throws `MemberStateError` for a file that cannot be read or used.
   */
  async load(
    pool: string,
    scheme: "http" | "https",
    protocol: "http" | "fastcgi" = "http",
  ): Promise<StoredMembers | undefined> {
    let text: string;
    try {
      text = await Deno.readTextFile(this.file(pool));
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return undefined;
      throw new MemberStateError(`cannot read: ${(err as Error).message ?? err}`);
    }
    return decodeMembers(pool, text, scheme, protocol);
  }
}

/** The JSON text of a state file. */
export function encodeMembers(pool: string, members: readonly MemberConfig[], now: number): string {
  return JSON.stringify({
    pool,
    updated: new Date(now).toISOString(),
    // A FastCGI member's connection limit is part of it (`max_conns`).
    members: members.map((m) =>
      m.max_conns === undefined
        ? { address: m.address, weight: m.weight }
        : { address: m.address, weight: m.weight, max_conns: m.max_conns }
    ),
  }) + "\n";
}

/** Parses a state file of `pool`; throws `MemberStateError` naming every problem. */
export function decodeMembers(
  pool: string,
  text: string,
  scheme: "http" | "https",
  protocol: "http" | "fastcgi" = "http",
): StoredMembers {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new MemberStateError("invalid JSON");
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw new MemberStateError("must be an object {pool, updated, members}");
  }
  const rec = doc as Record<string, unknown>;
  const errors: string[] = [];
  for (const key in rec) if (!KEYS.has(key)) errors.push(`unknown key "${key}"`);
  if (rec.pool !== pool) errors.push(`pool: must be "${pool}"`);
  const updated = typeof rec.updated === "string" ? Date.parse(rec.updated) : NaN;
  if (Number.isNaN(updated)) errors.push("updated: must be an ISO 8601 time");
  const result = validateMembers(rec.members, "");
  errors.push(...result.errors);
  if (result.members !== undefined) {
    errors.push(...poolMemberErrors(result.members, scheme, "", protocol));
  }
  if (errors.length > 0 || result.members === undefined) {
    throw new MemberStateError(errors.join("; "));
  }
  return { members: result.members, updated };
}
