/**
 * Keep-alive connections of single-address upstreams (`upstream: "http://..."`, and the
 * `fastcgi` address of `type: php`), one pool per
 * target and client settings, shared by every route that names it. Planned with the pools (see
 * `PoolRegistry`): a reload that keeps a target keeps its idle connections.
 */

import type {
  AddressTarget,
  Config,
  FastcgiTarget,
  ProxyRuntime,
  RuntimeConfig,
} from "../config/mod.ts";
import { FcgiConns } from "../fastcgi/mod.ts";
import { Connector, ConnPool } from "../http1/mod.ts";
import { addressTls, type PemReader } from "./member_tls.ts";

/** A proxy runtime whose target is a single address. */
export type AddressRuntime = ProxyRuntime & { readonly target: AddressTarget };

/** The key of a single-address runtime's connections in `cfg`: everything that decides them. */
export function addressKey(rt: AddressRuntime, cfg: Config): string {
  const c = cfg.server.upstream_client;
  const keepalive = rt.client?.keepalive ?? c.keepalive;
  const idle = rt.client?.idle_timeout ?? c.idle_timeout;
  return `${rt.target.url}|${rt.tls_ca_file ?? ""}|${keepalive}|${idle}`;
}

/** A `type: php` runtime's single FastCGI address with its limits. */
export type FastcgiAddress = FastcgiTarget & { readonly kind: "address" };

/** The key of a FastCGI address's connections (`type: php` with one `fastcgi` address). */
export function fastcgiKey(target: FastcgiAddress): string {
  return `fastcgi|${target.address.canonical}|${target.max_conns}|${target.max_queue}`;
}

/** The single FastCGI addresses of `type: php` runtimes. */
function fastcgiAddresses(cfg: Config): FastcgiAddress[] {
  const out: FastcgiAddress[] = [];
  const visit = (rt: RuntimeConfig) => {
    if (rt.type === "php" && rt.fastcgi.kind === "address") out.push(rt.fastcgi);
  };
  for (const t of cfg.tenants) {
    for (const a of t.applications) {
      visit(a.runtime);
      for (const r of a.routes) visit(r.runtime);
    }
  }
  return out;
}

/** Every proxy runtime of `cfg` that names a single address, applications before their routes. */
function addressRuntimes(cfg: Config): AddressRuntime[] {
  const out: AddressRuntime[] = [];
  const visit = (rt: RuntimeConfig) => {
    if (rt.type === "proxy" && rt.target.kind === "address") out.push(rt as AddressRuntime);
  };
  for (const t of cfg.tenants) {
    for (const a of t.applications) {
      visit(a.runtime);
      for (const r of a.routes) visit(r.runtime);
    }
  }
  return out;
}

/** What `planAddressConns` plans from. */
export interface AddressConnsInput {
  readonly config: Config;
  /** The connections in use now, by `addressKey`. */
  readonly live: ReadonlyMap<string, ConnPool>;
  /** Reads a new target's `tls_ca_file`. */
  readonly readPem: PemReader;
}

/**
 * The connection pools the configuration's single addresses use, by `addressKey`: the live ones
 * whose key stays, new ones for the rest.
 */
export function planAddressConns(input: AddressConnsInput): Map<string, ConnPool> {
  const cfg = input.config;
  const next = new Map<string, ConnPool>();
  const c = cfg.server.upstream_client;
  for (const rt of addressRuntimes(cfg)) {
    const k = addressKey(rt, cfg);
    if (next.has(k)) continue;
    const old = input.live.get(k);
    if (old !== undefined) {
      next.set(k, old);
      continue;
    }
    const connector = new Connector(rt.target.address, addressTls(rt.target, rt, input.readPem));
    next.set(
      k,
      new ConnPool(connector, {
        maxIdle: rt.client?.keepalive ?? c.keepalive,
        idleTimeout: rt.client?.idle_timeout ?? c.idle_timeout,
      }),
    );
  }
  for (const f of fastcgiAddresses(cfg)) {
    const k = fastcgiKey(f);
    if (next.has(k)) continue;
    next.set(
      k,
      input.live.get(k) ??
        new FcgiConns(new Connector(f.address, null), {
          address: f.address.canonical,
          maxConns: f.max_conns,
          maxQueue: f.max_queue,
        }),
    );
  }
  return next;
}
