/**
 * Sending the controller's member lists to instances: the fan-out of a `PUT` on the control
 * socket, bringing one instance up to the current lists before it is activated, and the
 * agreement view of `GET /v1/upstreams`. The lists themselves (file, version, which process
 * holds them) are `MemberLists`; the admin-socket transport is injected (a fake in tests).
 * Changes and pushes run one at a time.
 */
import {
  checkMembersBody,
  type Config,
  CONTROLLER_PUT_HEADER,
  type MemberConfig,
  putTargetError,
} from "../config/mod.ts";
import { Lock } from "../base/mod.ts";
import { log } from "../observe/mod.ts";
import { ControlError } from "./control_error.ts";
import { agreement, type InstancePools, MemberLists } from "./member_lists.ts";
import { type AdminRequest, adminRequest } from "./probe.ts";

/**
 * Member lists go to instances in these states: a warming one has no admin socket yet, and gets
 * every list once ready, before it is activated.
 */
const MEMBER_STATES: ReadonlySet<string> = new Set(["ready", "active"]);
const ADMIN_TIMEOUT = 5_000;

/** One instance's outcome of a member `PUT` fan-out. */
export interface MemberFanout {
  readonly id: string;
  readonly generation: number;
  readonly state: string;
  readonly applied: boolean;
  readonly status?: number;
  readonly error?: string;
}

/** An instance as the member sync sees it; `rec` is read live (it is replaced on changes). */
export interface MemberTarget {
  readonly rec: {
    readonly id: string;
    readonly pid: number;
    readonly generation: number;
    readonly state: string;
    readonly admin_socket: string;
  };
}

/** One request to an instance's admin socket (`adminRequest`, or a fake). */
export type AdminTransport = (
  socket: string,
  req: AdminRequest,
) => Promise<{ status: number; body: string }>;

export interface MemberSyncOptions {
  readonly stateDir: string;
  readonly now: () => number;
  /** Default: `adminRequest`. */
  readonly transport?: AdminTransport;
}

/** The process key the lists are held under (`id:pid`). */
export function targetKey(s: MemberTarget): string {
  return `${s.rec.id}:${s.rec.pid}`;
}

export class MemberSync {
  readonly members: MemberLists;
  private readonly lock = new Lock();
  private readonly transport: AdminTransport;

  constructor(o: MemberSyncOptions) {
    this.members = new MemberLists(o.stateDir, o.now);
    this.transport = o.transport ?? adminRequest;
  }

  /** Reads the recorded lists of `config`'s api pools (a restarted controller). */
  load(config: Config): Promise<void> {
    return this.members.load(config);
  }

  /** True when `s`'s process holds every current list. */
  inSync(s: MemberTarget): boolean {
    return this.members.inSync(targetKey(s));
  }

  /** Forgets processes not among `live` (ended instances). */
  prune(live: Iterable<MemberTarget>): void {
    this.members.prune(new Set([...live].map(targetKey)));
  }

  /** Sends one list to one instance, as the controller (the instance refuses others). */
  private async push(
    s: MemberTarget,
    pool: string,
    members: readonly MemberConfig[],
  ): Promise<{ status: number; body: string } | { error: string }> {
    try {
      return await this.transport(s.rec.admin_socket, {
        method: "PUT",
        path: `/v1/upstreams/${encodeURIComponent(pool)}`,
        timeoutMs: ADMIN_TIMEOUT,
        body: JSON.stringify({
          members: members.map((m) => ({ address: m.address, weight: m.weight })),
        }),
        headers: { [CONTROLLER_PUT_HEADER]: "1" },
      });
    } catch (err) {
      return { error: String((err as Error)?.message ?? err) };
    }
  }

  /**
   * Brings instance `s` up to the current member lists; true when it holds them. A pool its
   * generation lacks (404) or has as another kind (409) counts as held: nothing to apply.
   */
  sync(s: MemberTarget): Promise<boolean> {
    if (this.inSync(s)) return Promise.resolve(true);
    return this.lock.run(async () => {
      const version = this.members.version;
      for (const [pool, list] of this.members.lists) {
        const r = await this.push(s, pool, list);
        if ("error" in r || (r.status !== 200 && r.status !== 404 && r.status !== 409)) {
          log("warn", "members_not_synced", {
            id: s.rec.id,
            pool,
            ...("error" in r ? { error: r.error } : { status: r.status, body: r.body }),
          });
          return false;
        }
      }
      this.members.markSynced(targetKey(s), version);
      log("info", "members_synced", { id: s.rec.id, pid: s.rec.pid, version });
      return true;
    });
  }

  /**
   * `PUT /v1/upstreams/{name}` on the control socket: checks `text` against `config()` (the
   * current generation) exactly as an instance would, records the list atomically, then sends
   * it to every instance of `targets()` that may be serving; says per instance whether it
   * applied.
   */
  set(o: {
    name: string;
    text: string;
    config: () => Promise<Config>;
    targets: () => Iterable<MemberTarget>;
  }): Promise<Record<string, unknown>> {
    const { name, text } = o;
    return this.lock.run(async () => {
      const config = await o.config();
      const pool = config.upstreams[name];
      const target = putTargetError(name, pool);
      if (target !== undefined) throw new ControlError(target.status, target.error);
      const checked = checkMembersBody(text, pool);
      if ("error" in checked) throw new ControlError(checked.status, checked.error);
      const before = this.members.version;
      await this.members.set(name, checked.members);
      const version = this.members.version;
      const targets = [...o.targets()].filter((s) => MEMBER_STATES.has(s.rec.state));
      let view: Record<string, unknown> | undefined;
      const instances: MemberFanout[] = await Promise.all(targets.map(async (s) => {
        const wasSynced = this.members.inSyncAt(targetKey(s), before);
        const r = await this.push(s, name, checked.members);
        const base = { id: s.rec.id, generation: s.rec.generation, state: s.rec.state };
        if ("error" in r) return { ...base, applied: false, error: r.error };
        const applied = r.status === 200;
        if (applied) {
          if (wasSynced) this.members.markSynced(targetKey(s), version);
          try {
            view ??= JSON.parse(r.body);
          } catch { /* the answer is the instance's business */ }
        }
        return applied ? { ...base, applied, status: r.status } : {
          ...base,
          applied,
          status: r.status,
          error: errorOf(r.body),
        };
      }));
      log("info", "members_set", {
        pool: name,
        members: checked.members.length,
        version,
        applied: instances.filter((i) => i.applied).map((i) => i.id),
        not_applied: instances.filter((i) => !i.applied).map((i) => i.id),
      });
      const recorded = checked.members.map((m) => ({ address: m.address, weight: m.weight }));
      return { ...(view ?? { name, members: recorded }), instances };
    });
  }

  /**
   * `GET /v1/upstreams` on the control socket: `first`'s answer (one serving instance), and
   * whether every instance of `live` holds the same api pool lists (per instance and per pool).
   */
  async view(
    first: { id: string; generation: number; body: string },
    live: readonly MemberTarget[],
  ): Promise<Record<string, unknown>> {
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(first.body);
    } catch { /* shown as is below */ }
    const views: InstancePools[] = await Promise.all(live.map(async (s) => {
      try {
        const r = await this.transport(s.rec.admin_socket, {
          method: "GET",
          path: "/v1/upstreams",
          timeoutMs: ADMIN_TIMEOUT,
        });
        return { id: s.rec.id, pools: r.status === 200 ? JSON.parse(r.body).upstreams : null };
      } catch {
        return { id: s.rec.id, pools: null };
      }
    }));
    const a = agreement(this.members.lists, views);
    return {
      instance: first.id,
      generation: first.generation,
      ...body,
      agree: a.agree,
      instances: live.map((s) => ({
        id: s.rec.id,
        generation: s.rec.generation,
        state: s.rec.state,
        agree: a.instances[s.rec.id],
        members_in_sync: this.inSync(s),
      })),
      pools: a.pools,
    };
  }
}

function errorOf(body: string): string {
  try {
    const e = JSON.parse(body)?.error;
    if (typeof e === "string") return e;
  } catch { /* not JSON */ }
  return body.trim().slice(0, 200);
}
