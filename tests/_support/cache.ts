/**
 * Helpers for the cache's end-to-end tests: one application `a.test` proxying to one member
 * with `cache:` on, and a member whose answers a test scripts per path.
 */
import { members, proxy, scalwsYaml } from "./yaml.ts";
import { type Member, startMember } from "./members.ts";

/** The YAML of one cached application in front of `member`; `extra` adds app keys. */
export function cachedApp(
  member: { readonly address: string },
  cache: Record<string, unknown> = {},
  extra: { server?: Record<string, unknown>; app?: Record<string, unknown> } = {},
): string {
  return scalwsYaml({
    server: extra.server,
    upstreams: { p: { members: members(member), retries: 0 } },
    apps: [{ name: "a", domains: ["a.test"], runtime: proxy("p"), cache, ...extra.app }],
  });
}

/** A member answering `body` with `headers` on every path; `count` counts what reached it. */
export function scriptedMember(
  answer: (
    req: Request,
    n: number,
  ) => { body?: BodyInit | null; status?: number; headers?: HeadersInit },
): Member {
  return startMember("m", (req, m) => {
    const a = answer(req, m.count);
    return new Response(a.body ?? null, { status: a.status ?? 200, headers: a.headers });
  });
}
