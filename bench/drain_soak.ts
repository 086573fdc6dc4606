/**
 * Drain soak (not CI; `deno task drain-soak`): the scenario of issue 29 repeated. Each round
 * runs keep-alive clients (fetch loops and raw HTTP/1.1 keep-alive loops) through `scalwsd
 * controller` across scale 1 -> 3, a rolling reload and scale 3 -> 1
 * (`tests/_support/drain_round.ts`), once per `tcp_migrate_req` mode; then `scalwsd run` gets
 * SIGTERM under the same clients. Prints runs, requests and failures per phase; exits 1 on any
 * failed request. Needs root for the modes that set the sysctl; its value is put back. On a
 * shared host, run it in a network namespace of its own so that nobody else sees the sysctl
 * change: `unshare -rn sh -c 'ip link set lo up && deno task drain-soak'`.
 *
 *   deno task drain-soak [--rounds 10] [--modes 0,1,controller] [--hold 400] [--new-connections]
 *
 * `--new-connections`: the raw loops open a new connection per request (as `ab` without `-k`),
 * which is where `tcp_migrate_req` makes a difference.
 */

import { parseArgs } from "node:util";
import { drainRound, runDrainRound } from "../tests/_support/drain_round.ts";
import type { Tally } from "../tests/_support/drain_clients.ts";

const args = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "10" },
    modes: { type: "string", default: "0,1,controller" },
    hold: { type: "string", default: "400" },
    "new-connections": { type: "boolean", default: false },
  },
});
const rounds = Number(args.values.rounds);
const modes = args.values.modes!.split(",").filter((m) => m !== "") as ("0" | "1" | "controller")[];
const holdMs = Number(args.values.hold);
const newConnections = args.values["new-connections"]!;

/** Totals per scenario and phase: runs, answered, never sent, failed. */
const totals = new Map<string, { runs: number; ok: number; unsent: number; failed: number }>();
const failures: string[] = [];

function add(scenario: string, t: Tally): void {
  for (const [phase, p] of t.phases) {
    const key = `${scenario} | ${phase}`;
    const s = totals.get(key) ?? { runs: 0, ok: 0, unsent: 0, failed: 0 };
    s.runs++;
    s.ok += p.ok;
    s.unsent += p.unsent;
    s.failed += p.failed;
    totals.set(key, s);
    for (const e of p.errors) failures.push(`${key}: ${e}`);
  }
}

for (let i = 1; i <= rounds; i++) {
  for (const mode of modes) {
    const r = await drainRound({ migrate: mode, holdMs, newConnections, keepLogsIn: "/tmp" });
    const scenario = `controller, tcp_migrate_req ${
      mode === "controller" ? `set by the controller (${r.migrateReq})` : mode
    }`;
    add(scenario, r.tally);
    console.log(`round ${i} ${scenario}: ${r.tally.totalOk} ok, ${r.tally.totalFailed} failed`);
  }
  const t = await runDrainRound({ holdMs });
  add("scalwsd run, SIGTERM", t);
  console.log(`round ${i} scalwsd run SIGTERM: ${t.totalOk} ok, ${t.totalFailed} failed`);
}

console.log("\nscenario | phase | runs | answered | never sent | failed");
for (const [k, s] of totals) console.log(`${k} | ${s.runs} | ${s.ok} | ${s.unsent} | ${s.failed}`);
if (failures.length > 0) {
  console.log(`\nfailures (first 40):\n${failures.slice(0, 40).join("\n")}`);
  Deno.exit(1);
}
