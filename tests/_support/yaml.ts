/**
 * YAML builders for end-to-end tests: a configuration is written as plain objects and turned
 * into YAML here, so no test juggles indentation inside template strings.
 *
 *     scalwsYaml({
 *       upstreams: { p: { members: members(a, b), retries: 1 } },
 *       apps: [{ name: "a", domains: ["a.test"], runtime: proxy("p") }],
 *     })
 */
import YAML from "yaml";

/** A configuration; every part is optional. */
export interface ConfigSpec {
  /**
   * Keys under `server:`, merged over the defaults: one listener `http` on `127.0.0.1:0` and the
   * admin socket `{{dir}}/admin.sock`. A key set to `undefined` (`admin: undefined`) is left out.
   */
  readonly server?: Record<string, unknown>;
  /** `upstreams:`, pool name to pool. */
  readonly upstreams?: Record<string, unknown>;
  /** The applications of the one tenant `t` (ignored when `tenants` is given). */
  readonly apps?: readonly unknown[];
  /** `tenants:` as they are. */
  readonly tenants?: readonly unknown[];
  /** Any other top-level section (`acme`, `discovery`, ...), as it is. */
  readonly [section: string]: unknown;
}

/** The listener every test binds unless it says otherwise. */
export const HTTP_LISTENER = { name: "http", address: "127.0.0.1:0" } as const;

/** A certificate and key file, as `startPki().issue` gives them. */
type CertFiles = { readonly cert: string; readonly key: string };

/** A TLS listener `https` on `address` (an ephemeral port unless given) with `certs`. */
export function httpsListener(certs: CertFiles | readonly CertFiles[], address = "127.0.0.1:0") {
  const list = "cert" in certs ? [certs] : certs;
  return {
    name: "https",
    address,
    tls: { certificates: list.map(({ cert, key }) => ({ cert, key })) },
  };
}

/** The admin socket in the test's temporary directory (`Scalwsd.adminSocket`). */
export const ADMIN_SOCKET = { socket: "{{dir}}/admin.sock" } as const;

/** The YAML text of `spec` (see `ConfigSpec` for the defaults). */
export function scalwsYaml(spec: ConfigSpec = {}): string {
  const { server = {}, upstreams, apps, tenants, ...rest } = spec;
  const doc: Record<string, unknown> = {
    server: dropUndefined({ listeners: [HTTP_LISTENER], admin: ADMIN_SOCKET, ...server }),
  };
  if (upstreams !== undefined) doc.upstreams = upstreams;
  if (tenants !== undefined) doc.tenants = tenants;
  else if (apps !== undefined) doc.tenants = [{ name: "t", applications: apps }];
  Object.assign(doc, dropUndefined(rest));
  return YAML.stringify(doc, { lineWidth: 0 });
}

/** Pool members, one `{address}` each, from members, raw servers or `HOST:PORT` text. */
export function members(...list: readonly (string | { readonly address: string })[]) {
  return list.map((m) => ({ address: typeof m === "string" ? m : m.address }));
}

/**
 * Application `a` on host `a.test` with `runtime`; `extra` adds keys (`routes`, ...) or
 * replaces `name` and `domains`.
 */
export function app(runtime: unknown, extra: Record<string, unknown> = {}) {
  return { name: "a", domains: ["a.test"], runtime, ...extra };
}

/** A proxy runtime to pool `pool`; `extra` adds runtime keys (`response_timeout`, ...). */
export function proxy(pool: string, extra: Record<string, unknown> = {}) {
  return { type: "proxy", upstream: { pool }, ...extra };
}

/** A respond runtime answering `body`; `extra` adds runtime keys (`status`, ...). */
export function respond(body: string, extra: Record<string, unknown> = {}) {
  return { type: "respond", body, ...extra };
}

function dropUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
