/**
 * Validate: rules across the document, run on the provisioned parts. Pool references must
 * name a pool of `upstreams`; listener names and bound addresses, tenant names, application
 * names within a tenant and domains across the whole file must be unique; `default_host`
 * must be a configured, non-wildcard domain; TLS listeners' certificates must be readable, valid
 * and match their keys.
 */
import { loadCertificates, type ReadText } from "./certificates.ts";
import type { Draft, Sink } from "./provision.ts";
import type { CacheConfig, ServerConfig } from "./types.ts";
import { DEFAULTED_OBJECT_SIZE } from "./provision_applications.ts";

/**
 * Checks `draft` and appends `PATH: MESSAGE` errors to `sink`. The certificates of TLS
 * listeners are read with `readText` and checked (see `certificates.ts`).
 */
export function validate(
  draft: Draft,
  sink: Sink,
  readText: ReadText = Deno.readTextFileSync,
): void {
  for (const ref of draft.poolRefs) {
    if (!draft.poolNames.has(ref.pool)) {
      sink.errors.push(`${ref.path}: unknown pool "${ref.pool}"`);
      continue;
    }
    const speaks = draft.pools.get(ref.pool)?.protocol;
    if (ref.protocol !== undefined && speaks !== undefined && speaks !== ref.protocol) {
      sink.errors.push(
        ref.protocol === "fastcgi"
          ? `${ref.path}: pool "${ref.pool}" must have protocol: fastcgi`
          : `${ref.path}: pool "${ref.pool}" speaks FastCGI; use it from type: php`,
      );
    }
  }
  const domains = validateTenants(draft, sink);
  if (draft.server !== undefined) {
    validateCacheSizes(draft, draft.server.cache, sink);
    validateServer(draft.server, sink, readText);
    validateDefaultHost(draft.server, domains, draft.allApplications, sink);
  }
}

/**
 * A cache's `max_object_size` must fit in the store: `server.cache.max_size`, or with a disk
 * tier the larger of it and `server.cache.disk_max_size` (an answer may live on disk only). The
 * default (8 MiB, not written) is lowered to a smaller store's size.
 */
function validateCacheSizes(
  draft: Draft,
  cache: { max_size: number; disk_max_size?: number },
  sink: Sink,
): void {
  const disk = cache.disk_max_size ?? 0;
  const maxSize = Math.max(cache.max_size, disk);
  const name = disk > cache.max_size ? "server.cache.disk_max_size" : "server.cache.max_size";
  const check = (at: string, c: CacheConfig | false | undefined) => {
    if (!c || c.max_object_size <= maxSize) return;
    // The 8 MiB default, not written: a smaller store lowers it.
    if (DEFAULTED_OBJECT_SIZE.has(c)) (c as { max_object_size: number }).max_object_size = maxSize;
    else {sink.errors.push(
        `${at}.cache.max_object_size: must be at most ${name} (${maxSize} bytes)`,
      );}
  };
  for (const tenant of draft.tenants) {
    for (const app of tenant.applications) {
      const cfg = app.config;
      if (cfg === undefined) continue;
      check(app.path, cfg.cache);
      cfg.routes.forEach((r, i) => check(`${app.path}.routes[${i}]`, r.cache));
    }
  }
}

/** Returns every domain with the path of its first use. */
function validateTenants(draft: Draft, sink: Sink): Map<string, string> {
  const domains = new Map<string, string>();
  const tenantNames = new Map<string, string>();
  for (const tenant of draft.tenants) {
    if (tenant.name !== undefined) {
      const first = tenantNames.get(tenant.name);
      if (first !== undefined) {
        sink.errors.push(
          `${tenant.path}.name: duplicate tenant "${tenant.name}", first at ${first}`,
        );
      } else tenantNames.set(tenant.name, tenant.path);
    }
    const appNames = new Map<string, string>();
    for (const app of tenant.applications) {
      const first = appNames.get(app.name);
      if (first !== undefined) {
        sink.errors.push(
          `${app.path}.name: duplicate application "${app.name}", first at ${first}`,
        );
      } else appNames.set(app.name, app.path);
      for (let i = 0; i < app.domains.length; i++) {
        const domain = app.domains[i];
        const at = `${app.path}.domains[${i}]`;
        const firstDomain = domains.get(domain);
        if (firstDomain !== undefined) {
          // Across files, name both: site paths carry their file, main-file paths get it here.
          const first = tenant.file !== undefined && !firstDomain.includes(": ")
            ? `${draft.mainFile ?? "the main file"}: ${firstDomain}`
            : firstDomain;
          sink.errors.push(`${at}: duplicate domain "${domain}", first at ${first}`);
        } else domains.set(domain, at);
      }
    }
  }
  return domains;
}

function validateServer(server: ServerConfig, sink: Sink, readText: ReadText): void {
  const names = new Map<string, string>();
  const bound = new Map<string, string>();
  const bind = (path: string, a: { hostname: string; port: number }) => {
    if (a.port === 0) return; // each port 0 gets its own ephemeral port
    const key = `${a.hostname.includes(":") ? `[${a.hostname}]` : a.hostname}:${a.port}`;
    const first = bound.get(key);
    if (first !== undefined) {
      sink.errors.push(`${path}: address ${key} is already used by ${first}`);
    } else bound.set(key, path);
  };
  server.listeners.forEach((l, i) => {
    const path = `server.listeners[${i}]`;
    const first = names.get(l.name);
    if (first !== undefined) {
      sink.errors.push(`${path}.name: duplicate listener "${l.name}", first at ${first}`);
    } else names.set(l.name, path);
    bind(`${path}.address`, l);
    if (l.tls !== undefined) {
      loadCertificates(l.tls.certificates, `${path}.tls`, readText, sink.errors, sink.warnings);
      const acme = l.tls.acme;
      if (acme !== undefined) {
        if (!server.listeners.some((p) => p.tls === undefined)) {
          sink.warnings.push(
            `${path}.tls.acme: no plain listener answers the CA's HTTP-01 challenges (port 80)`,
          );
        }
        if (server.state_dir === undefined) {
          sink.errors.push(
            `${path}.tls.acme: needs server.state_dir (where the account and certificates are kept)`,
          );
        }
        if (acme.ca_file !== undefined) {
          let text: string | undefined;
          try {
            text = readText(acme.ca_file);
          } catch (err) {
            sink.errors.push(
              `${path}.tls.acme.ca_file: cannot read "${acme.ca_file}": ${(err as Error).message}`,
            );
          }
          if (text !== undefined && !text.includes("-----BEGIN CERTIFICATE-----")) {
            sink.errors.push(
              `${path}.tls.acme.ca_file: "${acme.ca_file}" holds no PEM certificate`,
            );
          }
        }
      }
    }
  });
  if (server.admin.remote !== undefined) bind("server.admin.remote.address", server.admin.remote);
  if (server.admin.http !== undefined) bind("server.admin.http.address", server.admin.http);
  const metrics = server.metrics;
  if (metrics.hostname !== undefined && metrics.port !== undefined) {
    bind("server.metrics.address", { hostname: metrics.hostname, port: metrics.port });
  }
}

function validateDefaultHost(
  server: ServerConfig,
  domains: Map<string, string>,
  complete: boolean,
  sink: Sink,
): void {
  const host = server.default_host;
  if (host === undefined) return;
  if (host.startsWith("*")) {
    sink.errors.push(`server.default_host: "${host}" must not be a wildcard`);
  } else if (complete && !domains.has(host)) {
    // When an application has errors its domains are unknown; its errors are reported instead.
    sink.errors.push(`server.default_host: "${host}" is not a domain of any application`);
  }
}
