/**
 * Warnings for `members_from: api` pools whose `members:` in the file differ from the list
 * recorded in `server.state_dir` (by a `PUT`): the recorded list is what is served, so an edit
 * of the file's list would otherwise change nothing, silently. `scalwsd check`, a start and a
 * reload report them.
 */
import type { Config, MemberConfig } from "../config/mod.ts";
import { MemberState } from "../discovery/mod.ts";

function key(list: readonly MemberConfig[]): string {
  return list.map((m) => `${m.address}=${m.weight}`).sort().join(",");
}

/** One warning per api pool whose file list differs from its recorded one (unreadable: none). */
export async function storedListWarnings(config: Config): Promise<string[]> {
  const dir = config.server.state_dir;
  if (dir === undefined) return [];
  const state = new MemberState(dir);
  const out: string[] = [];
  for (const [name, pool] of Object.entries(config.upstreams)) {
    if (pool.members_from !== "api" || pool.members.length === 0) continue;
    let stored;
    try {
      stored = await state.load(name, pool.scheme, pool.protocol);
    } catch {
      continue; // a start logs member_state_ignored and uses the file's list
    }
    if (stored === undefined || key(stored.members) === key(pool.members)) continue;
    out.push(
      `upstreams.${name}.members: differ from the list recorded in state_dir ${dir} (${
        state.file(name)
      }, by a PUT at ${
        new Date(stored.updated).toISOString()
      }), which is served; change the members with PUT /v1/upstreams/${name}, or remove that file before a restart to start from these`,
    );
  }
  return out;
}
