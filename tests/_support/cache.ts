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

/** A scripted member's answer to one request. */
export interface Answer {
  body?: BodyInit | null;
  status?: number;
  headers?: Record<string, string | undefined>;
}

/** A member answering what `answer` says; `n` counts requests so far, this one included. */
export function scriptedMember(
  answer: (req: Request, n: number) => Answer | Promise<Answer>,
): Member {
  return startMember("m", async (req, m) => {
    const a = await answer(req, m.count);
    const headers = new Headers();
    for (const [k, v] of Object.entries(a.headers ?? {})) if (v !== undefined) headers.set(k, v);
    return new Response(a.body ?? null, { status: a.status ?? 200, headers });
  });
}
