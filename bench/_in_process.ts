/**
 * What the in-process path benches share: a member in memory, a generation built from YAML, and
 * a request handed to the dispatcher as `Deno.serve` hands it over.
 */
import { systemClock } from "../src/base/clock.ts";
import { parseConfig } from "../src/config/load.ts";
import { ConnPool } from "../src/http1/conn_pool.ts";
import type { Socket, SocketFactory } from "../src/http1/types.ts";
import { createMetrics } from "../src/observe/families.ts";
import { buildGeneration } from "../src/server/build.ts";
import type { Dispatcher } from "../src/server/dispatcher.ts";
import { ServeSession } from "../src/server/serve_session.ts";
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
 * one generation), for the in-process path benches, with its metrics and pool registry. With
 * `answer`, every pool member and single-address proxy talks to a `MemoryMember` answering it.
 */
export function benchGeneration(yaml: string, answer?: Uint8Array) {
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
  if (answer !== undefined) {
    const memory: SocketFactory = { connect: () => Promise.resolve(new MemoryMember(answer)) };
    for (const pool of registry.pools.values()) {
      for (const m of pool.set.members) (m as { conns: ConnPool }).conns = new ConnPool(memory);
    }
    for (const h of gen.handlers) {
      if ("conns" in h) (h as { conns: ConnPool }).conns = new ConnPool(memory);
    }
  }
  return { gen, metrics, registry };
}

const INFO = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 40000 },
  completed: Promise.resolve(),
} as unknown as Deno.ServeHandlerInfo<Deno.Addr>;

/** Serves one request as Deno.serve hands it over, without a tracked connection. */
export function serveRequest(dispatcher: Dispatcher, r: Request): Response | Promise<Response> {
  return dispatcher.serve(new ServeSession(r, INFO, false, null), null) as
    | Response
    | Promise<Response>;
}

/**
 * Bench cases (`_cpu_batches.ts`) by name: `n` requests from each maker, built before the timing,
 * served one after another; a status other than 200 throws.
 */
export function serveCases(
  dispatcher: Dispatcher,
  makers: Readonly<Record<string, () => Request>>,
): Record<string, (n: number) => () => Promise<void>> {
  const one = (make: () => Request) => (n: number) => {
    const reqs = Array.from({ length: n }, make);
    return async (): Promise<void> => {
      for (const r of reqs) {
        const res = await serveRequest(dispatcher, r);
        if (res.status !== 200) throw new Error(`status ${res.status}`);
      }
    };
  };
  return Object.fromEntries(Object.entries(makers).map(([name, make]) => [name, one(make)]));
}
