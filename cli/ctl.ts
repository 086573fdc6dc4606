/**
 * `scalwsd ctl`: the operator's client of a running instance's admin socket (status, pools and
 * their members, member changes, reload, cache purge), printed as text or JSON;
 * `ctl_controller.ts` speaks to a controller instead.
 *
 * @module
 */

import { parseArgs } from "node:util";
import type { SiteJson } from "./ctl_format.ts";
import { formatApps, formatCache, formatPool, formatPools, formatSites } from "./ctl_format.ts";
import { purgeOfArgs } from "../src/cache/mod.ts";
import { CONTROLLER_CTL_USAGE, ctlController } from "./ctl_controller.ts";
import { callSocket } from "./socket_call.ts";
import { argsOrRefuse, runCtl } from "./ctl_run.ts";
import { parseMemberArgs } from "./member_args.ts";

/** Where `scalwsd ctl` looks for the admin socket without `--socket`. */
export const DEFAULT_SOCKET = "/run/scalws/admin.sock";

export const CTL_USAGE = `usage: scalwsd ctl [--socket PATH] [--json] COMMAND
  upstreams                          every pool with its members and their state
  upstreams show NAME                one pool
  upstreams set NAME ADDR[=WEIGHT]...  replace the members of a members_from: api pool
  apps                               supervised applications: workers, PID, state, restarts, CPU
  reload                             reload the configuration file
  sites                              the main file and each site file: tenants and domains
  cache                              cached objects, bytes and hit ratio per application
  cache purge URL                    remove the stored answers of one URL's path
  cache purge --prefix URL           remove every stored answer under the URL's path
  cache purge --all                  empty the cache
${CONTROLLER_CTL_USAGE.replace("usage: ", "   or: ")}`;

function call(socket: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const hint = "is scalwsd running with server.admin.socket set? use --socket PATH";
  return callSocket(socket, "the admin socket", hint, method, path, body);
}

/** `scalwsd ctl ...`: returns the exit status. */
export async function ctl(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        socket: { type: "string", short: "s" },
        "controller-socket": { type: "string" },
        json: { type: "boolean" },
        prefix: { type: "boolean" },
        all: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    // node:util's advice on positionals that start with "-" (its quote left open) helps no one
    // here: no ctl argument starts with "-".
    const why = (err as Error).message.replace(/\. To specify a positional argument[^]*$/, "");
    console.error(`scalwsd ctl: ${why}\n${CTL_USAGE}`);
    return 2;
  }
  const { values, positionals: p } = parsed;
  if (values.help || p.length === 0) {
    (values.help ? console.log : console.error)(CTL_USAGE);
    return values.help ? 0 : 2;
  }
  const controlSocket = values["controller-socket"];
  if (controlSocket !== undefined) {
    return await ctlController(controlSocket, p, values.json === true, values);
  }
  const socket = values.socket ?? Deno.env.get("SCALWSD_ADMIN_SOCKET") ?? DEFAULT_SOCKET;
  return await runCtl(p, { json: values.json === true, usage: CTL_USAGE }, async (out) => {
    if (p[0] === "reload" && p.length === 1) {
      const r = await call(socket, "POST", "/v1/reload") as {
        generation: number;
        warnings: string[];
      };
      out(
        r,
        () =>
          [`reloaded: generation ${r.generation}`, ...r.warnings.map((w) => `warning: ${w}`)].join(
            "\n",
          ),
      );
      return true;
    }
    if (p[0] === "apps" && p.length === 1) {
      const r = await call(socket, "GET", "/v1/apps") as { apps: Record<string, unknown>[] };
      out(r, () => formatApps(r.apps));
      return true;
    }
    if (p[0] === "cache" && p.length === 1) {
      const r = await call(socket, "GET", "/v1/cache") as Record<string, unknown>;
      out(r, () => formatCache(r));
      return true;
    }
    if (p[0] === "cache" && p[1] === "purge") {
      const target = argsOrRefuse(purgeOfArgs(p.slice(2), values));
      const r = await call(socket, "POST", "/v1/cache/purge", target) as { purged: number };
      out(r, () => `purged ${r.purged} ${r.purged === 1 ? "entry" : "entries"}`);
      return true;
    }
    if (p[0] === "sites" && p.length === 1) {
      const r = await call(socket, "GET", "/v1/sites") as { sites: SiteJson[] };
      out(r, () => formatSites(r.sites));
      return true;
    }
    if (p[0] === "upstreams" && p.length === 1) {
      const r = await call(socket, "GET", "/v1/upstreams") as {
        upstreams: Record<string, unknown>[];
      };
      out(r, () => formatPools(r.upstreams));
      return true;
    }
    if (p[0] === "upstreams" && p[1] === "show" && p.length === 3) {
      const r = await call(socket, "GET", `/v1/upstreams/${encodeURIComponent(p[2])}`) as Record<
        string,
        unknown
      >;
      out(r, () => formatPool(r));
      return true;
    }
    if (p[0] === "upstreams" && p[1] === "set" && p.length >= 3) {
      const members = argsOrRefuse(parseMemberArgs(p.slice(3)));
      const r = await call(socket, "PUT", `/v1/upstreams/${encodeURIComponent(p[2])}`, {
        members,
      }) as Record<string, unknown>;
      out(r, () => formatPool(r));
      return true;
    }
    return false;
  });
}
