/**
 * The member lists of `members_from: api` pools under the controller. The controller owns them:
 * a `PUT` on the control socket records a list in `<state_dir>/upstreams/<pool>.json` (atomic,
 * 0600, the same file format as a standalone `server.state_dir`), then sends it to every
 * instance. Each list change bumps `version`; an instance is in sync once it has accepted every
 * list of the current version, and it is activated only then, so a starting instance (scale
 * out, rolling reload, restart, re-adoption) never serves an older list.
 */
import type { Config, MemberConfig } from "../config/mod.ts";
import { MemberState, MemberStateError } from "../discovery/mod.ts";
import { log } from "../observe/mod.ts";

/** One instance's view of its pools, as `GET /v1/upstreams` answers (null: unreachable). */
export interface InstancePools {
  readonly id: string;
  readonly pools:
    | readonly {
      name: string;
      members_from?: string;
      members: { address: string; weight: number }[];
    }[]
    | null;
}

/** Whether the instances hold the same lists, per api pool and per instance. */
export interface Agreement {
  readonly agree: boolean;
  readonly instances: Record<string, boolean>;
  readonly pools: {
    name: string;
    agree: boolean;
    /** The recorded list, or null when the controller never set one (the file's seed). */
    recorded: { address: string; weight: number }[] | null;
    instances: Record<string, boolean>;
  }[];
}

function listKey(list: readonly { address: string; weight: number }[]): string {
  return list.map((m) => `${m.address}=${m.weight}`).sort().join(",");
}

/**
 * Compares the api pools of `views` with the recorded lists (or, for a pool never set, with
 * each other). An unreachable instance agrees with nothing.
 */
export function agreement(
  recorded: ReadonlyMap<string, readonly MemberConfig[]>,
  views: readonly InstancePools[],
): Agreement {
  const names = new Set<string>(recorded.keys());
  for (const v of views) {
    for (const p of v.pools ?? []) if (p.members_from === "api") names.add(p.name);
  }
  const instances: Record<string, boolean> = {};
  for (const v of views) instances[v.id] = v.pools !== null;
  const pools = [...names].sort().map((name) => {
    const rec = recorded.get(name);
    let ref = rec === undefined ? undefined : listKey(rec);
    const per: Record<string, boolean> = {};
    for (const v of views) {
      const p = v.pools?.find((x) => x.name === name);
      if (p === undefined) {
        per[v.id] = false;
        continue;
      }
      const key = listKey(p.members);
      ref ??= key;
      per[v.id] = key === ref;
    }
    for (const [id, ok] of Object.entries(per)) if (!ok) instances[id] = false;
    return {
      name,
      agree: Object.values(per).every((x) => x),
      recorded: rec === undefined
        ? null
        : rec.map((m) => ({ address: m.address, weight: m.weight })),
      instances: per,
    };
  });
  return { agree: Object.values(instances).every((x) => x), instances, pools };
}

/** The recorded lists, their version, and which instance processes hold it. */
export class MemberLists {
  readonly lists = new Map<string, readonly MemberConfig[]>();
  /** Bumped by every change; 0 while no list was ever set. */
  version = 0;
  private readonly synced = new Map<string, number>();
  private readonly state: MemberState;

  constructor(stateDir: string, private readonly now: () => number) {
    this.state = new MemberState(stateDir);
  }

  /** Reads the recorded lists of `config`'s api pools (a restarted controller); bad files are logged. */
  async load(config: Config): Promise<void> {
    for (const [name, pool] of Object.entries(config.upstreams)) {
      if (pool.members_from !== "api") continue;
      try {
        const stored = await this.state.load(name, pool.scheme);
        if (stored !== undefined) this.lists.set(name, stored.members);
      } catch (err) {
        log("error", "member_state_ignored", {
          pool: name,
          file: this.state.file(name),
          error: err instanceof MemberStateError ? err.message : String(err),
        });
      }
    }
    if (this.lists.size > 0) this.version++;
  }

  /** Records `members` of `pool` durably, then makes it the current list. */
  async set(pool: string, members: readonly MemberConfig[]): Promise<void> {
    await this.state.save(pool, members, this.now());
    this.lists.set(pool, members);
    this.version++;
  }

  /** True when the instance process `key` (`id:pid`) holds every current list. */
  inSync(key: string): boolean {
    return this.lists.size === 0 || this.synced.get(key) === this.version;
  }

  /** True when the instance process `key` held every list of `version`. */
  inSyncAt(key: string, version: number): boolean {
    return version === 0 || this.synced.get(key) === version;
  }

  /** The instance process `key` holds the lists of `version`. */
  markSynced(key: string, version: number): void {
    this.synced.set(key, version);
  }

  /** Forgets processes not in `live` (ended instances). */
  prune(live: ReadonlySet<string>): void {
    for (const k of this.synced.keys()) if (!live.has(k)) this.synced.delete(k);
  }
}
