/**
 * `AdminTarget`: what the admin API may ask of a running server (state, pools, member changes,
 * reload, purge, limits), the one interface `Server` implements for it, so that `admin/` never
 * imports the server's internals.
 *
 * @module
 */

import type { Clock, Lock } from "../src/base/mod.ts";
import type { LimitsStoreState } from "../src/pipeline/mod.ts";
import type { Cache } from "../src/cache/mod.ts";
import type { Config, MemberConfig } from "../src/config/mod.ts";
import type { Registry } from "../src/observe/mod.ts";
import type { Pool } from "../src/upstream/mod.ts";
import type { AppView } from "../src/apps/mod.ts";

/** A pool's member source as the server keeps it (times in ms). */
export interface MemberSourceView {
  readonly source: "file" | "api" | "dns" | "kubernetes";
  readonly updated?: number;
  readonly lastError?: string;
  readonly lastErrorAt?: number;
}

/** What `POST /v1/reload` gets back: the new generation's id, or every error of the file. */
export type ReloadOutcome =
  | { readonly ok: true; readonly generationId: number; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly errors: readonly string[] };

/**
 * What the admin API and its listeners need of a running scalwsd. `Server` (src/server/)
 * implements it; admin/ depends on this interface, never on the server's internals.
 */
export interface AdminTarget {
  /** The configuration file, named in the audit lines of reloads. */
  readonly file: string;
  /**
   * A problem `PATH: MESSAGE` of the current configuration as an operator reads it,
   * `FILE:LINE:COLUMN: PATH: MESSAGE` where the file's source map knows PATH.
   */
  placed?(problem: string): string;
  /** The current generation's configuration. */
  readonly config: Config;
  readonly clock: Clock;
  /** Serialises member changes with reloads. */
  readonly lock: Lock;
  /** Lifecycle state: `starting`, `warming`, `ready`, `active` or `draining`. */
  readonly state: string;
  readonly generation: { readonly id: number };
  readonly metrics: { readonly registry: Registry };
  readonly registry: { readonly pools: ReadonlyMap<string, Pool> };
  /** Supervised applications and their worker processes (`GET /v1/apps`). */
  readonly apps: { view(): readonly AppView[] };
  /** The response cache: its store (purges) and its statistics. */
  readonly cache: Cache;
  /** The shared `limit_req` store's state (`GET /v1/limits`), or null without one. */
  limitsStoreState(): LimitsStoreState | null;
  reload(): Promise<ReloadOutcome>;
  /**
   * Records an api pool's new member list where it survives a restart (`server.state_dir`),
   * before the list is installed; throws when it cannot, and then nothing may change.
   */
  saveMembers(pool: string, members: readonly MemberConfig[]): Promise<void>;
  /**
   * Records a `PUT` to pool `pool`: its source (`kubernetes` when the ingress controller sent
   * it) and, when the list `changed`, its last update time and the update counter.
   */
  noteMembers(
    pool: string,
    how: { readonly source: "api" | "kubernetes"; readonly changed: boolean },
  ): void;
  /** Interval of the samples behind the console's charts (ms). */
  readonly historyIntervalMs: number;
  /** Where a pool's members come from, when they last changed, and the last discovery error. */
  memberSource(pool: string): MemberSourceView | undefined;
  /**
   * The controller's control socket when this process is one of its instances: member lists
   * are then set there, and the admin API refuses a `PUT` that does not come from it.
   */
  readonly controllerSocket?: string;
}
