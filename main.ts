/**
 * scalwsd: an HTTP gateway in one binary.
 *
 *   scalwsd [run] --config FILE     serve (SIGHUP reloads, SIGTERM drains)
 *   scalwsd check --config FILE     validate a configuration
 *   scalwsd ctl [--socket PATH] ... talk to a running instance's admin socket
 */
import { parseArgs } from "node:util";
import { check } from "./cli/check.ts";
import { ctl } from "./cli/ctl.ts";
import { run } from "./cli/run.ts";

export const USAGE = `usage:
  scalwsd [run] --config FILE       serve the configuration (SIGHUP reloads, SIGTERM drains)
  scalwsd check --config FILE       validate a configuration; prints "ok" or every error
  scalwsd ctl [--socket PATH] [--json] COMMAND
      upstreams                     every pool with its members and their state
      upstreams show NAME           one pool
      upstreams set NAME ADDR[=WEIGHT]...
                                    replace the members of a members_from: api pool
      reload                        reload the configuration file
  scalwsd --version | --help`;

export const VERSION = "0.1.0";

async function main(argv: string[]): Promise<number> {
  const sub = argv[0] && !argv[0].startsWith("-") ? argv[0] : "run";
  const rest = sub === argv[0] ? argv.slice(1) : argv;
  if (sub === "ctl") return await ctl(rest);
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
  return sub === "check" ? await check(values.config) : await run(values.config);
}

if (import.meta.main) Deno.exit(await main(Deno.args));
