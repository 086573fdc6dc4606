/**
 * What `scalwsd ingress` and `scalwsd gateway` do alike once a configuration is served: set the
 * members of the `p_<namespace>_<service>_<port>` pools through the admin API's `PUT` (marked
 * `x-scalws-source: kubernetes`; a list already set is not sent again), and send status
 * patches to the API server (failures are logged, never thrown).
 */
import { type createAdminApp, SOURCE_HEADER } from "../admin/mod.ts";
import { CONTROLLER_PUT_HEADER } from "../src/config/mod.ts";
import type { KubeMember } from "../src/discovery/mod.ts";
import { log } from "../src/observe/mod.ts";
import type { Server } from "../src/server/mod.ts";
import type { KubeConnection } from "./kube_connection.ts";

/** Sets pool members by `PUT`, remembering what each pool was last given. */
export class MemberPusher {
  private readonly last = new Map<string, string>();

  constructor(
    private readonly app: () => ReturnType<typeof createAdminApp>,
    private readonly server: () => Server,
    private readonly event: string,
  ) {}

  async push(members: ReadonlyMap<string, readonly KubeMember[]>): Promise<void> {
    for (const [pool, list] of members) {
      const body = JSON.stringify({ members: list });
      if (this.last.get(pool) === body) continue;
      const res = await this.app().request(`/v1/upstreams/${pool}`, {
        method: "PUT",
        body,
        headers: {
          [SOURCE_HEADER]: "kubernetes",
          ...(this.server().controllerSocket ? { [CONTROLLER_PUT_HEADER]: "1" } : {}),
        },
      });
      if (res.status === 200) this.last.set(pool, body);
      else {
        log("error", this.event, { pool, status: res.status, body: await res.text() });
      }
    }
    for (const pool of this.last.keys()) if (!members.has(pool)) this.last.delete(pool);
  }
}

/**
 * Sends one merge patch to a status subresource; false (logged as `<event>_refused` or
 * `<event>_failed`, the object under `key`, default `object`) when it failed.
 */
export async function patchStatus(
  kube: KubeConnection,
  p: { readonly path: string; readonly body: string; readonly what: string },
  event: string,
  key = "object",
): Promise<boolean> {
  try {
    const res = await fetch(kube.server + p.path, {
      method: "PATCH",
      headers: { ...kube.headers, "content-type": "application/merge-patch+json" },
      body: p.body,
      signal: AbortSignal.timeout(10_000),
      ...(kube.client ? { client: kube.client } : {}),
    });
    const text = await res.text();
    if (res.ok) return true;
    log("error", `${event}_refused`, {
      [key]: p.what,
      status: res.status,
      body: text.slice(0, 200),
    });
  } catch (err) {
    log("error", `${event}_failed`, {
      [key]: p.what,
      error: String((err as Error)?.message ?? err),
    });
  }
  return false;
}
