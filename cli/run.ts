import { ConfigError } from "../src/config/errors.ts";
import { log } from "../src/observe/log.ts";
import { AdminListeners } from "../src/server/admin_listeners.ts";
import { Server } from "../src/server/server.ts";

/** `scalwsd run --config FILE`: serve until SIGTERM or SIGINT; SIGHUP reloads. */
export async function run(file: string): Promise<number> {
  let server: Server;
  try {
    server = await Server.prepare(file);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 1;
    }
    console.error(`scalwsd: ${(err as Error).message ?? err}`);
    return 1;
  }
  const admin = new AdminListeners(server);
  try {
    await server.bind();
    await admin.start();
  } catch (err) {
    console.error(`scalwsd: cannot listen: ${(err as Error).message ?? err}`);
    return 1;
  }
  log("info", "started", { file, generation: server.generation.id, pid: Deno.pid });

  const { promise: stopped, resolve } = Promise.withResolvers<string>();
  Deno.addSignalListener("SIGHUP", () => {
    server.reload();
  });
  Deno.addSignalListener("SIGTERM", () => resolve("SIGTERM"));
  Deno.addSignalListener("SIGINT", () => resolve("SIGINT"));
  const signal = await stopped;
  log("info", "draining", { signal });
  await admin.stop();
  await server.drain();
  log("info", "stopped", {});
  return 0;
}
