/**
 * scalwsd: an HTTP gateway in one binary.
 *
 *   scalwsd [run] --config FILE     serve (SIGHUP reloads, SIGTERM drains)
 *   scalwsd check --config FILE     validate a configuration
 *   scalwsd ctl [--socket PATH] ... talk to a running instance's admin socket
 *   scalwsd controller --config F   start and manage instances on SO_REUSEPORT
 *   scalwsd ingress ...             Kubernetes ingress controller (one process)
 *   scalwsd gateway ...             Kubernetes Gateway API controller (one process)
 */
// Only what runs before the SIGUSR1 guard is imported statically: the guard may re-execute the
// process, and the commands' module graph is loaded once, after it (dynamic imports below). So
// the three files it needs, not their rooms' faces (deno task layers allows main.ts this).
import { parseArgs } from "node:util";
import { blockUsr1 } from "./src/base/usr1.ts";
import { dropDebugEnv } from "./src/base/debug_env.ts";
import { log } from "./src/observe/log.ts";

export const USAGE = `usage:
  scalwsd [run] --config FILE       serve the configuration (SIGHUP reloads, SIGUSR1 reopens the
                                    access log, SIGTERM drains)
  scalwsd check --config FILE       validate a configuration; prints "ok" or every error
  scalwsd ctl [--socket PATH] [--json] COMMAND
      upstreams                     every pool with its members and their state
      upstreams show NAME           one pool
      upstreams set NAME ADDR[=WEIGHT]...
                                    replace the members of a members_from: api pool
      apps                          supervised applications: workers, PID, state, restarts, CPU
      reload                        reload the configuration file
      sites                         the main file and each site file: tenants and domains
      cache                         cached objects, bytes and hit ratio per application
      cache purge URL | --prefix URL | --all
                                    remove stored answers: one URL's, a prefix's, every one
  scalwsd ctl --controller-socket PATH [--json] COMMAND
      status                        every instance and generation, the desired count
      reload | rollback             roll to a new generation of the configuration, or back
      scale N                       set the instance count
      enable | disable              turn autoscaling on or off
      cache                         cached objects, bytes and hit ratio of every instance
      cache purge [--prefix] URL | --all
                                    purge on every instance
      upstreams [show NAME]         the pools of one serving instance
      upstreams set NAME ADDR[=WEIGHT]...
                                    record the members of an api pool for every instance
      stop                          drain every instance, then stop the controller
  scalwsd controller --config FILE  start and manage instances (docs/controller.md)
  scalwsd ingress --base-config FILE --config-out FILE [--kubeconfig FILE]
      [--ingress-class NAME] [--https-address ADDR] [--publish-status-address ADDR,...]
                                    Kubernetes ingress controller (docs/kubernetes.md)
  scalwsd gateway --base-config FILE --config-out FILE [--kubeconfig FILE]
      [--controller-name NAME] [--listen-host HOST] [--port-offset N]
      [--publish-status-address ADDR,...]
                                    Kubernetes Gateway API controller (docs/kubernetes.md)
  scalwsd run flags (the controller passes them to each instance):
      --instance-id ID              managed: listeners are bound on SIGUSR2, SIGHUP is ignored
      --generation N --cpus LIST --admin-socket PATH --metrics-address HOST:PORT
      --controller-socket PATH      the controller's control socket (api pools' members)
      --base-dir DIR                where the file's relative paths resolve (a generation's copy)
      --drain-timeout DURATION      in-flight requests get this long after SIGTERM (30s)
  scalwsd --version | --help`;

export const VERSION = "0.1.0";

/** The commands that run until stopped: SIGUSR1 must never open Deno's inspector in them. */
const LONG_RUNNING = new Set(["run", "controller", "ingress", "gateway"]);
const NO_SERVE = new Set(["--help", "-h", "--version"]);

async function main(args: string[]): Promise<number> {
  // `deno task run -- run --config F` passes the `--` on: it separates nothing here.
  const argv = args[0] === "--" ? args.slice(1) : args;
  const sub = argv[0] && !argv[0].startsWith("-") ? argv[0] : "run";
  const rest = sub === argv[0] ? argv.slice(1) : argv;
  if (LONG_RUNNING.has(sub) && !rest.some((a) => NO_SERVE.has(a))) {
    // Debug surfaces Deno opens from the environment: gone from the re-executed image below.
    for (const d of dropDebugEnv()) log("warn", "debug_env_removed", { ...d });
    // Re-executes this process with SIGUSR1 blocked in every thread (returns when it is).
    const why = blockUsr1();
    if (why !== null) log("warn", "sigusr1_unguarded", { reason: why });
  }
  if (sub === "ctl") return await (await import("./cli/ctl.ts")).ctl(rest);
  if (sub === "controller") return await (await import("./cli/controller.ts")).controller(rest);
  if (sub === "ingress") return await (await import("./cli/ingress.ts")).ingress(rest);
  if (sub === "gateway") return await (await import("./cli/gateway.ts")).gateway(rest);
  if (sub !== "run" && sub !== "check") {
    console.error(`scalwsd: unknown command "${sub}"\n${USAGE}`);
    return 2;
  }
  const { RUN_FLAGS, runOptions } = await import("./cli/run_options.ts");
  let values;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        config: { type: "string", short: "c" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean" },
        ...RUN_FLAGS,
      },
      strict: true,
    }));
  } catch (err) {
    console.error(`scalwsd: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.version) {
    console.log(`scalwsd ${VERSION}`);
    return 0;
  }
  if (!values.config) {
    console.error(`scalwsd: --config FILE is required\n${USAGE}`);
    return 2;
  }
  if (sub === "check") return await (await import("./cli/check.ts")).check(values.config);
  const opts = runOptions(values);
  if (typeof opts === "string") {
    console.error(`scalwsd: ${opts}\n${USAGE}`);
    return 2;
  }
  return await (await import("./cli/run.ts")).run(values.config, opts);
}

if (import.meta.main) Deno.exit(await main(Deno.args));
