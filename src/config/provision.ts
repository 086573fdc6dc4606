/**
 * Provision: runs each unit of the document through its schema, then fills in defaults and
 * builds the typed objects of `types.ts`. Rules between fields of one object (`hash` only
 * with `balance: hash`, `upstream` or `backends`, `tls_ca_file` only with `https://`) are
 * checked here; rules across the document are in `validate.ts`.
 *
 * This file is the entry point (a whole document, a site file); the parts are provisioned by
 * subject: `provision_server.ts`, `provision_pools.ts`, `provision_applications.ts` (tenants,
 * applications, routes), `provision_runtimes.ts`; the draft and sink are `provision_draft.ts`.
 */
import { parseUnit } from "./issues.ts";
import { provisionTenants } from "./provision_applications.ts";
import { DEFAULT_FILES, type Draft, type Files, isRecord, type Sink } from "./provision_draft.ts";
import { provisionUpstreams } from "./provision_pools.ts";
import { provisionServer } from "./provision_server.ts";
import { serverSchema } from "./schema.ts";
import { unknownKeyMessage } from "./suggest.ts";

export type {
  Draft,
  DraftApplication,
  DraftTenant,
  Files,
  PoolRef,
  Sink,
} from "./provision_draft.ts";
export {
  DEFAULT_CACHE_SIZE,
  DEFAULT_HANDSHAKE_TIMEOUT,
  DEFAULT_MAX_BODY,
} from "./provision_server.ts";
export { DEFAULT_AFFINITY_COOKIE, provisionPool, STICKY_COOKIE_PREFIX } from "./provision_pools.ts";
export {
  DEFAULT_MAX_OBJECT_SIZE,
  DEFAULT_STALE_WHILE_REVALIDATE,
  routeClash,
} from "./provision_applications.ts";
export { DEFAULT_FASTCGI } from "./provision_runtimes.ts";

const ROOT_KEYS = new Set(["server", "upstreams", "tenants"]);

/**
 * Provisions a whole document (the YAML as plain data). An empty document is an empty
 * mapping; a missing `server` is an empty one (and so lacks listeners); `upstreams` and
 * `tenants` default to empty.
 */
export function provision(data: unknown, sink: Sink, files: Files = DEFAULT_FILES): Draft {
  const draft: Draft = {
    pools: new Map(),
    poolNames: new Set(),
    tenants: [],
    poolRefs: [],
    allApplications: true,
  };
  const doc = data ?? {};
  if (!isRecord(doc)) {
    sink.errors.push("(root): must be a mapping");
    return draft;
  }
  for (const key in doc) {
    if (!ROOT_KEYS.has(key)) sink.errors.push(`(root): ${unknownKeyMessage(key, [...ROOT_KEYS])}`);
  }
  const server = parseUnit(serverSchema, doc.server ?? {}, ["server"], sink.errors);
  if (server !== undefined) draft.server = provisionServer(server, sink);
  provisionUpstreams(doc.upstreams, draft, sink);
  provisionTenants(doc.tenants, ["tenants"], draft, { ...sink, ...files });
  return draft;
}

/**
 * Adds the tenants of a site file (already parsed; `file` as it is named in messages, `dir`
 * its directory): only `tenants` is allowed there.
 */
export function provisionSite(
  data: unknown,
  file: string,
  draft: Draft,
  sink: Sink,
  files: Files,
): void {
  const doc = data ?? {};
  if (!isRecord(doc)) {
    sink.errors.push(`${file}: (root): must be a mapping`);
    return;
  }
  for (const key in doc) {
    if (key === "upstreams" || key === "server") {
      sink.errors.push(
        `${file}: ${key}: not allowed in a site file; a site file holds tenants only ` +
          `(${key === "upstreams" ? "pools are" : "server settings are"} defined in the main file)`,
      );
    } else if (key !== "tenants") {
      sink.errors.push(`${file}: (root): ${unknownKeyMessage(key, ["tenants"])}`);
    }
  }
  const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : ".";
  const from = draft.tenants.length;
  provisionTenants(doc.tenants, [`${file}: tenants`], draft, {
    ...sink,
    ...files,
    dir,
  });
  for (let i = from; i < draft.tenants.length; i++) {
    (draft.tenants[i] as { file?: string }).file = file;
  }
}
