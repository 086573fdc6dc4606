/**
 * Debian's `redis-server` for tests, on a Unix socket in a temporary directory (or a loopback
 * port): no persistence, killed by its pid. `stop()` and `start()` again on the same socket
 * simulate an outage.
 */
import { waitUntil } from "./wait.ts";

export interface RedisServer extends AsyncDisposable {
  /** `unix:/path/redis.sock` as scalwsd's `limits_store.redis.address` takes it. */
  readonly address: string;
  readonly socket: string;
  /** Kills the server (SIGKILL): an outage. */
  stop(): Promise<void>;
  /** Starts it again on the same socket. */
  start(): Promise<void>;
  /** Stops (SIGSTOP) or resumes (SIGCONT) the server: a Redis that accepts and never answers. */
  stall(on: boolean): void;
  /** One command through `redis-cli`, its output trimmed. */
  cli(...args: string[]): Promise<string>;
}

/** Whether `redis-server` is installed (tests that need it say so when it is not). */
export function haveRedis(): boolean {
  try {
    Deno.statSync("/usr/bin/redis-server");
    return true;
  } catch {
    return false;
  }
}

export async function startRedis(): Promise<RedisServer> {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-redis-" });
  const socket = `${dir}/redis.sock`;
  let child: Deno.ChildProcess | undefined;
  const start = async () => {
    child = new Deno.Command("/usr/bin/redis-server", {
      args: [
        "--port",
        "0",
        "--unixsocket",
        socket,
        "--unixsocketperm",
        "700",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir,
      ],
      stdout: "null",
      stderr: "null",
    }).spawn();
    await waitUntil(async () => {
      const c = await Deno.connect({ transport: "unix", path: socket });
      c.close();
      return true;
    }, { what: "redis-server's socket", timeoutMs: 5000 });
  };
  const stop = async () => {
    if (child === undefined) return;
    const c = child;
    child = undefined;
    try {
      c.kill("SIGKILL");
    } catch { /* gone */ }
    await c.status;
    await Deno.remove(socket).catch(() => {});
  };
  await start();
  return {
    address: `unix:${socket}`,
    socket,
    stop,
    start,
    stall(on: boolean) {
      child?.kill(on ? "SIGSTOP" : "SIGCONT");
    },
    async cli(...args: string[]) {
      const out = await new Deno.Command("redis-cli", {
        args: ["-s", socket, ...args],
        stdout: "piped",
      })
        .output();
      return new TextDecoder().decode(out.stdout).trim();
    },
    async [Symbol.asyncDispose]() {
      await stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
