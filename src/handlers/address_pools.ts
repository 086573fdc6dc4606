import type { AddressTarget, Config, ProxyRuntime } from "../config/types.ts";
import { ConnPool } from "../http1/conn_pool.ts";
import { Connector } from "../http1/connector.ts";
import { addressTls, type PemReader } from "../upstream/member_tls.ts";

/** The keep-alive pool of one single-address upstream, keyed by what decides its connections. */
function targetKey(t: AddressTarget, rt: ProxyRuntime, keepalive: number, idle: number): string {
  return `${t.url}|${rt.tls_ca_file ?? ""}|${keepalive}|${idle}`;
}

export interface AddressPlan {
  readonly pools: ReadonlyMap<string, ConnPool>;
  readonly retired: readonly ConnPool[];
}

/**
 * Connection pools of single-address upstreams (`upstream: "http://..."`). A reload that keeps
 * a target keeps its idle connections; removed targets close theirs.
 */
export class AddressPools {
  private pools: ReadonlyMap<string, ConnPool> = new Map();

  static key(t: AddressTarget, rt: ProxyRuntime, cfg: Config): string {
    const c = cfg.server.upstream_client;
    return targetKey(
      t,
      rt,
      rt.client?.keepalive ?? c.keepalive,
      rt.client?.idle_timeout ?? c.idle_timeout,
    );
  }

  /** Plans `cfg`'s targets; new ones read their `tls_ca_file` with `readPem`. */
  plan(cfg: Config, readPem: PemReader): AddressPlan {
    const next = new Map<string, ConnPool>();
    const visit = (rt: ProxyRuntime) => {
      if (rt.target.kind !== "address") return;
      const k = AddressPools.key(rt.target, rt, cfg);
      if (next.has(k)) return;
      const old = this.pools.get(k);
      if (old) {
        next.set(k, old);
        return;
      }
      const t = rt.target;
      const c = cfg.server.upstream_client;
      next.set(
        k,
        new ConnPool(new Connector(t.address, addressTls(t, rt, readPem)), {
          maxIdle: rt.client?.keepalive ?? c.keepalive,
          idleTimeout: rt.client?.idle_timeout ?? c.idle_timeout,
        }),
      );
    };
    for (const t of cfg.tenants) {
      for (const a of t.applications) {
        if (a.runtime.type === "proxy") visit(a.runtime);
        for (const r of a.routes) if (r.runtime.type === "proxy") visit(r.runtime);
      }
    }
    const retired = [...this.pools].filter(([k]) => !next.has(k)).map(([, p]) => p);
    return { pools: next, retired };
  }

  commit(plan: AddressPlan): void {
    for (const p of plan.retired) p.close();
    this.pools = plan.pools;
  }

  closeAll(): void {
    for (const p of this.pools.values()) p.close();
  }
}
