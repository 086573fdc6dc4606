/** What the in-process path benches share: a member in memory and a generation built from YAML. */
import { systemClock } from "../src/base/clock.ts";
import { parseConfig } from "../src/config/load.ts";
import type { Socket } from "../src/http1/types.ts";
import { createMetrics } from "../src/observe/families.ts";
import { buildGeneration } from "../src/server/build.ts";
import { AffinityKey } from "../src/upstream/affinity.ts";
import { PoolRegistry } from "../src/upstream/registry.ts";

/**
 * A member in memory for the in-process path benches: every request head written to it gets
 * `answer` back on the next read, with no socket and no copy beyond `set`.
 */
export class MemoryMember implements Socket {
  #ready = 0;
  #wait: ((n: number | null) => void) | null = null;
  #buf: Uint8Array | null = null;

  constructor(private readonly answer: Uint8Array) {}

  read(p: Uint8Array): Promise<number | null> {
    if (this.#ready > 0) return Promise.resolve(this.#fill(p));
    return new Promise((resolve) => {
      this.#buf = p;
      this.#wait = resolve;
    });
  }
  #fill(p: Uint8Array): number {
    this.#ready--;
    p.set(this.answer);
    return this.answer.length;
  }
  write(p: Uint8Array): Promise<number> {
    this.#ready++;
    const w = this.#wait;
    if (w !== null) {
      this.#wait = null;
      w(this.#fill(this.#buf!));
    }
    return Promise.resolve(p.length);
  }
  close(): void {}
}

/**
 * The configuration `yaml` built as a running instance builds it (pools planned and committed,
 * one generation), for the in-process path benches, with its metrics and pool registry.
 */
export function benchGeneration(yaml: string) {
  const cfg = parseConfig(yaml, "bench.yaml").config;
  const metrics = createMetrics();
  const registry = new PoolRegistry({ metrics, key: new AffinityKey(), clock: systemClock });
  const plan = registry.plan(cfg, { readPem: () => "" });
  const gen = buildGeneration(cfg, 1, {
    metrics,
    pools: plan.pools,
    addresses: plan.addresses,
    clock: systemClock,
  });
  registry.commit(plan);
  return { gen, metrics, registry };
}
