/** `scalwsd ctl --controller-socket PATH ...`: the client of the controller's control socket. */
import { table } from "./ctl_format.ts";
import { formatPool, formatPools } from "./ctl_format.ts";
import { callSocket } from "./socket_call.ts";
import { argsOrRefuse, CtlArgsError, runCtl } from "./ctl_run.ts";
import { purgeOfArgs } from "../src/cache/mod.ts";
import { parseMemberArgs } from "./member_args.ts";

export const CONTROLLER_CTL_USAGE = `usage: scalwsd ctl --controller-socket PATH [--json] COMMAND
  status                 every instance and generation, the desired count, the last evaluation
  reload                 validate the configuration, write a new generation, roll to it
  rollback               roll back to the previous generation
  scale N                set the instance count (instances.min .. instances.max)
  enable | disable       turn autoscaling on or off (off freezes the count at once)
  cache                  cached objects, bytes and hit ratio of every instance
  cache purge [--prefix] URL | --all   purge on every instance; answers the sum
  upstreams [show NAME]  the pools of one serving instance; whether every instance agrees
  upstreams set NAME ADDR[=WEIGHT]...
                         record the members of a members_from: api pool, send them to every instance
  stop                   drain every instance, then stop the controller`;

function call(socket: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const hint = "is scalwsd controller running?";
  return callSocket(socket, "the control socket", hint, method, path, body);
}

interface StatusJson {
  controller: {
    generation: number;
    previous_generation: number | null;
    desired: number;
    autoscaling: boolean;
    next_step: string;
    limits: { cpu_affinity: string; cgroups: string };
  };
  instances: {
    id: string;
    state: string;
    pid: number;
    generation: number;
    cpus: number[];
    wanted: boolean;
    adopted: boolean;
    state_since: string;
    gave_up: boolean;
    restart_at: string | null;
  }[];
  last_evaluation: { class: string; action: string; reason: string; score: number | null } | null;
}

/** The status as a few lines and a table of instances. */
export function formatStatus(s: StatusJson): string {
  const c = s.controller;
  const lines = [
    `generation ${c.generation}${
      c.previous_generation === null ? "" : ` (previous ${c.previous_generation})`
    }` +
    `  desired ${c.desired}  autoscaling ${c.autoscaling ? "on" : "off"}  next ${c.next_step}`,
    `cpu affinity ${c.limits.cpu_affinity}; cgroups ${c.limits.cgroups}`,
  ];
  const e = s.last_evaluation;
  if (e) {
    lines.push(
      `last evaluation: class=${e.class} action=${e.action} score=${
        e.score ?? "-"
      } reason="${e.reason}"`,
    );
  }
  const rows = s.instances.map((i) => [
    i.id,
    i.state + (i.gave_up ? " (gave up)" : "") +
    (!i.wanted && i.state !== "stopped" && i.state !== "failed" ? " (removing)" : ""),
    String(i.pid),
    String(i.generation),
    i.cpus.join(","),
    i.adopted ? "yes" : "no",
    i.restart_at ?? i.state_since,
  ]);
  lines.push(
    table(["ID", "STATE", "PID", "GENERATION", "CPUS", "ADOPTED", "SINCE / RESTART AT"], rows),
  );
  return lines.join("\n");
}

interface MemberFanoutJson {
  id: string;
  generation: number;
  state: string;
  applied: boolean;
  error?: string;
}

/** The pool as an instance answered it, then one line per instance: applied or why not. */
export function formatFanout(r: Record<string, unknown> & { instances: MemberFanoutJson[] }) {
  const lines = "balance" in r ? [formatPool(r)] : [`pool ${r.name}: recorded`];
  if (r.instances.length === 0) {
    lines.push("no instance running: each gets the list when it starts");
  }
  for (const i of r.instances) {
    lines.push(
      `${i.id} (generation ${i.generation}, ${i.state}): ${
        i.applied
          ? "applied"
          : `not applied${i.error ? `: ${i.error}` : ""} (the controller sends it again)`
      }`,
    );
  }
  return lines.join("\n");
}

/** Runs one command against the control socket; returns the exit status. */
export async function ctlController(
  socket: string,
  p: readonly string[],
  json: boolean,
  flags: { readonly prefix?: boolean; readonly all?: boolean } = {},
): Promise<number> {
  return await runCtl(p, { json: json, usage: CONTROLLER_CTL_USAGE }, async (out) => {
    if (p[0] === "status" && p.length === 1) {
      const r = await call(socket, "GET", "/v1/status") as StatusJson;
      out(r, () => formatStatus(r));
      return true;
    }
    if ((p[0] === "reload" || p[0] === "rollback") && p.length === 1) {
      const r = await call(socket, "POST", `/v1/${p[0]}`) as {
        generation: number;
        previous: number;
        warnings?: string[];
      };
      out(r, () =>
        [
          `${
            p[0] === "reload" ? "reloading" : "rolling back"
          }: generation ${r.generation} (was ${r.previous}), rolling one instance at a time`,
          ...(r.warnings ?? []).map((w) => `warning: ${w}`),
        ].join("\n"));
      return true;
    }
    if (p[0] === "scale" && p.length !== 2) {
      throw new CtlArgsError('scale: needs one instance count, as in "scale 3"');
    }
    if (p[0] === "scale" && p.length === 2) {
      if (!/^\d+$/.test(p[1])) throw new CtlArgsError(`invalid instance count "${p[1]}"`);
      const r = await call(socket, "POST", "/v1/scale", { instances: Number(p[1]) }) as {
        desired: number;
        previous: number;
      };
      out(r, () => `scaling: ${r.previous} -> ${r.desired} instances`);
      return true;
    }
    if ((p[0] === "enable" || p[0] === "disable") && p.length === 1) {
      const r = await call(socket, "POST", `/v1/autoscaling/${p[0]}`) as { autoscaling: boolean };
      out(r, () => `autoscaling ${r.autoscaling ? "on" : "off"}`);
      return true;
    }
    if (p[0] === "upstreams" && p.length === 1) {
      const r = await call(socket, "GET", "/v1/upstreams") as {
        instance: string;
        upstreams: Record<string, unknown>[];
        agree?: boolean;
        instances?: { id: string; agree: boolean }[];
      };
      out(r, () => {
        const differ = (r.instances ?? []).filter((i) => !i.agree).map((i) => i.id);
        const agree = r.agree === undefined
          ? ""
          : r.agree
          ? "\nevery instance holds the same member lists"
          : `\ninstances disagree about member lists: ${differ.join(", ")}`;
        return `from ${r.instance}${agree}\n${formatPools(r.upstreams)}`;
      });
      return true;
    }
    if (p[0] === "upstreams" && p[1] === "set" && p.length >= 3) {
      const members = argsOrRefuse(parseMemberArgs(p.slice(3)));
      const r = await call(socket, "PUT", `/v1/upstreams/${encodeURIComponent(p[2])}`, {
        members,
      }) as Record<string, unknown> & { instances: MemberFanoutJson[] };
      out(r, () => formatFanout(r));
      return true;
    }
    if (p[0] === "upstreams" && p[1] === "show" && p.length === 3) {
      const r = await call(socket, "GET", `/v1/upstreams/${encodeURIComponent(p[2])}`) as Record<
        string,
        unknown
      >;
      out(r, () => `from ${r.instance}\n${formatPool(r)}`);
      return true;
    }
    if (p[0] === "cache" && p.length === 1) {
      const r = await call(socket, "GET", "/v1/cache") as {
        objects: number;
        bytes: number;
        hit_ratio: number;
        instances: { id: string; objects: number; bytes: number; hit_ratio?: number }[];
      };
      const pct = (v: number | undefined) =>
        typeof v === "number" ? `${(v * 100).toFixed(1)}%` : "-";
      out(r, () =>
        `objects ${r.objects}  bytes ${r.bytes}  hit ratio ${pct(r.hit_ratio)}\n` +
        table(
          ["INSTANCE", "OBJECTS", "BYTES", "HIT_RATIO"],
          r.instances.map((
            i,
          ) => [i.id, String(i.objects ?? "-"), String(i.bytes ?? "-"), pct(i.hit_ratio)]),
        ));
      return true;
    }
    if (p[0] === "cache" && p[1] === "purge") {
      const target = argsOrRefuse(purgeOfArgs(p.slice(2), flags));
      const r = await call(socket, "POST", "/v1/cache/purge", target) as { purged: number };
      out(r, () => `purged ${r.purged} ${r.purged === 1 ? "entry" : "entries"} on every instance`);
      return true;
    }
    if (p[0] === "stop" && p.length === 1) {
      const r = await call(socket, "POST", "/v1/stop");
      out(r, () => "stopping: draining every instance");
      return true;
    }
    return false;
  });
}
