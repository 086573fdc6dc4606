/**
 * Cost of one balancer pick, per policy, for pools of 2, 100 and 10,000 members with equal and
 * mixed weights. `deno bench bench/pick_bench.ts` runs them as benchmarks (one pick per
 * iteration); `deno run bench/pick_bench.ts --table` prints the median per pick over batches.
 * least_conn iterations include the request's two `inflightChanged` calls (start and finish).
 */

import { createBalancer, type PolicyBalancer } from "../src/upstream/balance/index.ts";
import type { Candidate, PickContext } from "../src/upstream/types.ts";
import { seeded } from "../src/base/random.ts";

class BenchMember implements Candidate {
  inflight = 0;
  up = true;
  constructor(readonly address: string, readonly weight: number) {}
  available(_now: number): boolean {
    return this.up;
  }
}

type Weights = "equal" | "mixed 1..10" | "mixed 1..1000";

function members(n: number, weights: Weights): BenchMember[] {
  const rnd = seeded(n);
  const out: BenchMember[] = [];
  for (let i = 0; i < n; i++) {
    const w = weights === "equal"
      ? 1
      : 1 + Math.floor(rnd() * (weights === "mixed 1..10" ? 10 : 1000));
    out.push(new BenchMember(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}:8080`, w));
  }
  return out;
}

/** A mutable context reused across picks, as a request would. */
interface MutableContext {
  now: number;
  key: string | undefined;
  tried: ReadonlySet<Candidate> | null;
  healthVersion?: number;
}

interface Case {
  readonly name: string;
  /** Runs one pick (and what belongs to it). */
  readonly run: () => void;
}

const KEYS_MISS = Array.from({ length: 200_000 }, (_, i) => `client-${i}`);
const KEYS_HIT = Array.from({ length: 100 }, (_, i) => `hot-${i}`);

function cases(): Case[] {
  const out: Case[] = [];
  for (const n of [2, 100, 10_000]) {
    for (const weights of ["equal", "mixed 1..10", "mixed 1..1000"] as Weights[]) {
      if (weights === "mixed 1..1000" && n !== 10_000) continue;
      const label = `n=${n} ${weights}`;
      for (const withVersion of [true, false]) {
        if (!withVersion && n !== 10_000) continue;
        const suffix = withVersion ? "" : " (no healthVersion)";
        const ctx: MutableContext = {
          now: 1000,
          key: undefined,
          tried: null,
          healthVersion: withVersion ? 1 : undefined,
        };
        const c = ctx as PickContext;

        const rr = createBalancer("round_robin", members(n, weights));
        out.push({ name: `round_robin ${label}${suffix}`, run: () => void rr.pick(c) });

        out.push(leastConn(n, weights, c, true, `least_conn ${label}${suffix}`));
        if (n === 10_000) {
          out.push(
            leastConn(n, weights, c, false, `least_conn ${label}${suffix}, no notifications`),
          );
        }

        const fo = createBalancer("failover", members(n, weights));
        out.push({ name: `failover ${label}${suffix}`, run: () => void fo.pick(c) });

        const hash = createBalancer("hash", members(n, weights));
        let hit = 0;
        const hitCtx: MutableContext = { ...ctx };
        out.push({
          name: `hash ${label}${suffix}, 100 hot keys (cache hits)`,
          run: () => {
            hitCtx.key = KEYS_HIT[hit++ % KEYS_HIT.length];
            hash.pick(hitCtx as PickContext);
          },
        });
        let miss = 0;
        const missCtx: MutableContext = { ...ctx };
        const hash2 = createBalancer("hash", members(n, weights));
        out.push({
          name: `hash ${label}${suffix}, 200k distinct keys (cache misses)`,
          run: () => {
            missCtx.key = KEYS_MISS[miss++ % KEYS_MISS.length];
            hash2.pick(missCtx as PickContext);
          },
        });
      }
    }
  }
  return out;
}

/** least_conn under load: each pick starts a request and one earlier request finishes. */
function leastConn(
  n: number,
  weights: Weights,
  c: PickContext,
  notify: boolean,
  name: string,
): Case {
  const ms = members(n, weights);
  const b: PolicyBalancer<BenchMember> = createBalancer("least_conn", ms);
  const ring: BenchMember[] = new Array(Math.max(2, Math.min(n, 64)));
  let head = 0;
  return {
    name,
    run: () => {
      const m = b.pick(c)!;
      m.inflight++;
      if (notify) b.inflightChanged(m);
      const slot = head++ % ring.length;
      const done = ring[slot];
      ring[slot] = m;
      if (done !== undefined) {
        done.inflight--;
        if (notify) b.inflightChanged(done);
      }
    },
  };
}

/** Median time per pick over batches (batch sizes keep each batch well above timer noise). */
function median(run: () => void): number {
  let batch = 1;
  for (;;) {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) run();
    if (performance.now() - t0 > 2 || batch >= 1 << 16) break;
    batch *= 2;
  }
  const samples: number[] = [];
  const deadline = performance.now() + 400;
  while (samples.length < 15 || (performance.now() < deadline && samples.length < 200)) {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) run();
    samples.push((performance.now() - t0) / batch);
  }
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1] * 1000;
}

if (Deno.args.includes("--table")) {
  for (const c of cases()) {
    for (let i = 0; i < 2000; i++) c.run(); // warm up
    const us = median(c.run);
    console.log(`${c.name.padEnd(72)} ${us < 10 ? us.toFixed(3) : us.toFixed(1)} us`);
  }
} else {
  for (const c of cases()) Deno.bench(c.name, c.run);
}
