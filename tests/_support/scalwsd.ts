/**
 * scalwsd started in-process for end-to-end tests, from YAML text:
 *
 *     await using m = startMember("a");
 *     await using s = await startScalwsd(yaml);
 *
 * Disposing drains the server, stops the admin listeners and removes the temporary directory.
 * Disposal runs in reverse order: declare members before scalwsd, so that scalwsd has drained
 * before its members close. A test that holds requests behind a gate opens the gate in a
 * `finally` of its own, before anything is disposed.
 */
import { Server, type ServerOptions } from "../../src/server/server.ts";
import { AdminListeners } from "../../admin/listeners.ts";
import { setLogSink } from "../../src/observe/log.ts";

/** A running scalwsd. */
/** The drain deadline on disposal (ms): a third of it is the idle connections' grace. */
const DISPOSE_DRAIN = 300;

export interface Scalwsd extends AsyncDisposable {
  readonly server: Server;
  readonly admin: AdminListeners;
  /** `http://127.0.0.1:PORT` of the first listener. */
  readonly url: string;
  /** The temporary directory that `{{dir}}` stands for. */
  readonly dir: string;
  /** The config file. */
  readonly file: string;
  /** `{{dir}}/admin.sock`: the admin socket that the YAML builders configure. */
  readonly adminSocket: string;
  /** Event log lines captured while running. */
  readonly logs: string[];
  /** Rewrites the config file (for reloads); `{{dir}}` is filled in. */
  write(yaml: string): Promise<void>;
  /** What disposing does; for tests that must stop scalwsd before they end. */
  close(): Promise<void>;
}

/**
 * Starts scalwsd in-process. `yaml` may use `{{dir}}` for a temporary directory (admin socket
 * paths, static roots). Listeners should use port 0. Access logs are off unless `options` say.
 */
export async function startScalwsd(yaml: string, options: ServerOptions = {}): Promise<Scalwsd> {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-test-" });
  const file = `${dir}/scalws.yaml`;
  const fill = (y: string) => y.replaceAll("{{dir}}", dir);
  await Deno.writeTextFile(file, fill(yaml));
  const logs: string[] = [];
  setLogSink((l) => logs.push(l));
  let server: Server | undefined;
  let admin: AdminListeners | undefined;
  try {
    server = await Server.prepare(file, { accessLog: "off", ...options });
    await server.bind();
    admin = new AdminListeners(server);
    await admin.start();
  } catch (err) {
    // A start that fails half way leaves nothing behind either.
    await admin?.stop().catch(() => {});
    await server?.drain().catch(() => {});
    setLogSink(null);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw err;
  }
  const first = [...server.bound.values()][0];
  let closed: Promise<void> | undefined;
  const close = () =>
    closed ??= (async () => {
      await admin.stop();
      // A short drain deadline: idle keep-alive connections get a grace of 100 ms, not 1 s.
      await server.drain(DISPOSE_DRAIN);
      setLogSink(null);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    })();
  return {
    server,
    admin,
    url: first ? `http://127.0.0.1:${first.port}` : "",
    dir,
    file,
    adminSocket: `${dir}/admin.sock`,
    logs,
    write: (y) => Deno.writeTextFile(file, fill(y)),
    close,
    [Symbol.asyncDispose]: close,
  };
}
