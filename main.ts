/**
 * scalwsd: an HTTP gateway in one binary.
 *
 *   scalwsd [run] --config FILE     serve (SIGHUP reloads, SIGTERM drains)
 *   scalwsd check --config FILE     validate a configuration
 *   scalwsd ctl [--socket PATH] ... talk to a running instance's admin socket
 *   scalwsd controller --config F   start and manage instances on SO_REUSEPORT
 *   scalwsd ingress ...             Kubernetes ingress controller (one process)
 */
import { parseArgs } from "node:util";
import { check } from "./cli/check.ts";
import { controller } from "./cli/controller.ts";
import { ctl } from "./cli/ctl.ts";
import { ingress } from "./cli/ingress.ts";
import { run } from "./cli/run.ts";
import { RUN_FLAGS, runOptions } from "./cli/run_options.ts";

export const USAGE = `usage:
  scalwsd [run] --config FILE       serve the configuration (SIGHUP reloads, SIGTERM drains)
  scalwsd check --config FILE       validate a configuration; prints "ok" or every error
  scalwsd ctl [--socket PATH] [--json] COMMAND
      upstreams                     every pool with its members and their state
      upstreams show NAME           one pool
      upstreams set NAME ADDR[=WEIGHT]...
                                    replace the members of a members_from: api pool
      reload                        reload the configuration file
  scalwsd ctl --controller-socket PATH [--json] COMMAND
      status | reload | rollback | scale N | enable | disable | upstreams [show NAME] | stop
  scalwsd controller --config FILE  start and manage instances (README, "Controller")
  scalwsd ingress --base-config FILE --config-out FILE [--kubeconfig FILE]
      [--ingress-class NAME] [--https-address ADDR] [--publish-status-address ADDR,...]
                                    Kubernetes ingress controller (README, "Kubernetes")
  scalwsd run flags (the controller passes them to each instance):
      --instance-id ID              managed: listeners are bound on SIGUSR2, SIGHUP is ignored
      --generation N --cpus LIST --admin-socket PATH --metrics-address HOST:PORT
      --drain-timeout DURATION      in-flight requests get this long after SIGTERM (30s)
  scalwsd --version | --help`;

export const VERSION = "0.1.0";

async function main(argv: string[]): Promise<number> {
  const sub = argv[0] && !argv[0].startsWith("-") ? argv[0] : "run";
  const rest = sub === argv[0] ? argv.slice(1) : argv;
  if (sub === "ctl") return await ctl(rest);
  if (sub === "controller") return await controller(rest);
  if (sub === "ingress") return await ingress(rest);
  if (sub !== "run" && sub !== "check") {
    console.error(`scalwsd: unknown command "${sub}"\n${USAGE}`);
    return 2;
  }
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
  if (sub === "check") return await check(values.config);
  const opts = runOptions(values);
  if (typeof opts === "string") {
    console.error(`scalwsd: ${opts}\n${USAGE}`);
    return 2;
  }
  return await run(values.config, opts);
}

if (import.meta.main) Deno.exit(await main(Deno.args));
