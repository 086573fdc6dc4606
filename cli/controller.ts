/**
 * `scalwsd controller --config FILE`: loads the controller's configuration and runs the controller
 * (`src/controller/`) until a signal stops it; returns the exit status.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { Usr1Watch } from "../src/base/mod.ts";
import { ConfigError } from "../src/config/mod.ts";
import {
  Controller,
  createControlApp,
  findExecutable,
  loadControllerConfig,
  selfCommand,
  serveControlSocket,
} from "../src/controller/mod.ts";
import { log } from "../src/observe/mod.ts";
import { affinityKeyProblem, preflight } from "../src/server/mod.ts";
import type { Config } from "../src/config/mod.ts";

const CONTROLLER_USAGE = `usage: scalwsd controller --config CONTROLLER_FILE
  Starts and manages scalwsd instances on this host (see docs/controller.md).
  SIGTERM/SIGINT/SIGQUIT stop the controller and leave the instances serving; SIGHUP reloads;
  SIGUSR1 is passed on to the instances (they reopen their log files);
  "scalwsd ctl --controller-socket PATH stop" drains every instance, then stops.`;

/**
 * What `scalwsd check` finds in a file an instance would fail to start on: files it reads (CA
 * files) and the affinity key file. Not the remote admin listener's certificate and key:
 * instances do not start it under the controller, and the controller holds no TLS keys.
 */
function instanceChecks(config: Config): string[] {
  const server = { ...config.server, admin: { ...config.server.admin, remote: undefined } };
  const key = affinityKeyProblem(config);
  return [...preflight({ ...config, server }), ...(key === undefined ? [] : [key])];
}

/** `scalwsd controller --config FILE`: returns the exit status. */
export async function controller(args: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: { config: { type: "string", short: "c" }, help: { type: "boolean", short: "h" } },
      strict: true,
    }));
  } catch (err) {
    console.error(`scalwsd controller: ${(err as Error).message}\n${CONTROLLER_USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(CONTROLLER_USAGE);
    return 0;
  }
  if (!values.config) {
    console.error(`scalwsd controller: --config FILE is required\n${CONTROLLER_USAGE}`);
    return 2;
  }
  let ctl: Controller;
  try {
    const cfg = await loadControllerConfig(values.config);
    ctl = new Controller(cfg, {
      command: selfCommand(Deno.execPath(), new URL("../main.ts", import.meta.url).href),
      taskset: findExecutable(["/usr/bin/taskset", "/bin/taskset"]),
      preflight: instanceChecks,
    });
    await ctl.start();
  } catch (err) {
    console.error(
      err instanceof ConfigError
        ? err.message
        : `scalwsd controller: ${(err as Error).message ?? err}`,
    );
    return 1;
  }
  const { promise: done, resolve } = Promise.withResolvers<string>();
  let server: Deno.HttpServer;
  try {
    server = await serveControlSocket(ctl.cfg.socket, createControlApp(ctl, () => resolve("stop")));
  } catch (err) {
    console.error(
      `scalwsd controller: cannot listen on ${ctl.cfg.socket}: ${(err as Error).message}`,
    );
    await ctl.close();
    return 1;
  }
  log("info", "control_listening", { socket: ctl.cfg.socket });
  Deno.addSignalListener("SIGTERM", () => resolve("SIGTERM"));
  Deno.addSignalListener("SIGINT", () => resolve("SIGINT"));
  Deno.addSignalListener("SIGQUIT", () => resolve("SIGQUIT"));
  // SIGUSR2 activates an instance; sent to the controller (nginx's binary upgrade habit, or a
  // signal to the process group) its default action would end it without a word.
  Deno.addSignalListener("SIGUSR2", () => {
    log("warn", "signal_ignored", {
      signal: "SIGUSR2",
      reason: "the controller activates instances with it; it does nothing to the controller",
    });
  });
  // SIGUSR1 is blocked (main.ts, blockUsr1): taken here, it never reaches Deno's inspector.
  const usr1 = new Usr1Watch(() => ctl.reopenLogs());
  Deno.addSignalListener("SIGHUP", () => {
    ctl.reload().catch((err) => log("error", "reload_failed", { error: (err as Error).message }));
  });
  const reason = await done;
  usr1.stop();
  if (reason === "stop") await ctl.stopAll();
  else await ctl.close();
  await Promise.race([server.shutdown(), new Promise((r) => setTimeout(r, 1_000))]);
  await Deno.remove(ctl.cfg.socket).catch(() => {});
  log("info", "controller_stopped", {
    reason,
    instances: reason === "stop" ? "stopped" : "left serving; re-adopted on the next start",
  });
  return 0;
}
