/**
 * `scalwsd --help` names every subcommand main.ts dispatches, every `ctl` command of
 * `scalwsd ctl --help` (instance and controller forms) and every `run` flag.
 */
import assert from "node:assert/strict";
import { USAGE } from "../main.ts";
import { CTL_USAGE } from "../cli/ctl.ts";
import { CONTROLLER_CTL_USAGE } from "../cli/ctl_controller.ts";
import { RUN_FLAGS } from "../cli/run_options.ts";

/** The command words of a ctl usage text: `upstreams set`, `cache purge`, `enable`, ... */
function commands(usage: string): string[] {
  const out: string[] = [];
  for (const line of usage.split("\n").slice(1)) {
    const m = /^ {2}([a-z][a-z |]*?)(?= [A-Z[-]| {2}|$)/.exec(line);
    if (m === null) continue;
    for (const alt of m[1].split("|")) if (alt.trim() !== "") out.push(alt.trim());
  }
  return out;
}

Deno.test("scalwsd --help lists every subcommand, every ctl command and every run flag", () => {
  const main = Deno.readTextFileSync(new URL("../main.ts", import.meta.url));
  const dispatched = [...main.matchAll(/sub [!=]== "([a-z]+)"/g)].map((m) => m[1]);
  assert.ok(dispatched.length >= 4, `found ${dispatched}`);
  for (const sub of new Set(dispatched)) {
    assert.match(USAGE, new RegExp(`scalwsd \\[?${sub}\\b`), `subcommand "${sub}" missing`);
  }
  const split = USAGE.indexOf("scalwsd ctl --controller-socket");
  const instanceCtl = USAGE.slice(USAGE.indexOf("scalwsd ctl ["), split);
  const controllerCtl = USAGE.slice(split, USAGE.indexOf("scalwsd controller"));
  const ctlOwn = CTL_USAGE.slice(0, CTL_USAGE.indexOf("   or: "));
  const instance = commands(ctlOwn);
  const controller = commands(CONTROLLER_CTL_USAGE);
  assert.ok(instance.includes("cache purge") && controller.includes("rollback"));
  for (const c of instance) {
    assert.match(instanceCtl, new RegExp(`\\b${c}\\b`), `ctl command "${c}" missing`);
  }
  for (const c of controller) {
    assert.match(
      controllerCtl,
      new RegExp(`\\b${c}\\b`),
      `ctl --controller-socket command "${c}" missing`,
    );
  }
  for (const flag of Object.keys(RUN_FLAGS)) {
    assert.match(USAGE, new RegExp(`--${flag}\\b`), `run flag --${flag} missing`);
  }
});
