/**
 * Instance records: one JSON file per slot in `<state_dir>/instances/<id>.json`, mode 0600,
 * replaced atomically on every change. A restarted controller reads them to find and verify
 * the instances it started.
 */
import { ensureDir, writeFileAtomic } from "../base/mod.ts";
import type { InstanceState } from "./lifecycle.ts";

/** What the controller knows about one slot (`web-0`, `web-1`, ...). */
export interface InstanceRecord {
  readonly id: string;
  /** 0 when no process was ever started in this slot. */
  readonly pid: number;
  /** Process start time in clock ticks since boot (`/proc/PID/stat` field 22). */
  readonly start_time: number;
  /** Resolved path of the instance executable, checked against `/proc/PID/exe`. */
  readonly executable: string;
  readonly cpus: readonly number[];
  /** The configuration generation the instance was started on. */
  readonly generation: number;
  readonly state: InstanceState;
  /** False once the slot is being removed (scale-in, replaced by a rolling reload). */
  readonly wanted: boolean;
  /** `host:port` of the instance's metrics listener (`/metrics`, `/readyz`). */
  readonly metrics: string;
  readonly admin_socket: string;
  readonly log_file: string;
  /** ISO times: process spawned, last state change, record written. */
  readonly started_at: string;
  readonly state_since: string;
  readonly updated_at: string;
  /** Times (ms since the epoch) of failures within the restart window. */
  readonly failures: readonly number[];
  /** True once `max_restarts` was exceeded: the slot stays Failed. */
  readonly gave_up: boolean;
  /** Why the last process ended, when it did. */
  readonly last_exit?: {
    readonly code: number | null;
    readonly signal: string | null;
    readonly reason: string;
  };
}

const ID = /^web-(\d{1,4})$/;

/** `web-3` -> 3; undefined for anything else. */
export function slotIndex(id: string): number | undefined {
  const m = ID.exec(id);
  return m === null ? undefined : Number(m[1]);
}

/** Reads and writes the records of one state directory. */
export class RecordStore {
  readonly dir: string;

  constructor(stateDir: string) {
    this.dir = `${stateDir}/instances`;
  }

  async init(): Promise<void> {
    await ensureDir(this.dir);
  }

  path(id: string): string {
    return `${this.dir}/${id}.json`;
  }

  async write(record: InstanceRecord): Promise<void> {
    await writeFileAtomic(this.path(record.id), JSON.stringify(record, null, 2) + "\n");
  }

  /**
   * Every readable record, ordered by slot index. A file that is not a record (a leftover
   * temporary, a damaged file) is reported through `onBad` and skipped.
   */
  async readAll(
    onBad: (file: string, reason: string) => void = () => {},
  ): Promise<InstanceRecord[]> {
    const out: InstanceRecord[] = [];
    for await (const e of Deno.readDir(this.dir)) {
      if (!e.isFile || !e.name.endsWith(".json")) continue;
      const id = e.name.slice(0, -5);
      if (slotIndex(id) === undefined) continue;
      try {
        const r = JSON.parse(await Deno.readTextFile(`${this.dir}/${e.name}`)) as InstanceRecord;
        if (r.id !== id || typeof r.pid !== "number" || typeof r.state !== "string") {
          onBad(e.name, "not an instance record");
          continue;
        }
        out.push(r);
      } catch (err) {
        onBad(e.name, (err as Error).message);
      }
    }
    return out.sort((a, b) => slotIndex(a.id)! - slotIndex(b.id)!);
  }
}
