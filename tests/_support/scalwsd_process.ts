/**
 * `scalwsd run` as a child process, for tests that measure what the server itself spends (its
 * CPU time from `/proc`) apart from the test's clients:
 *
 *     await using p = await startScalwsdProcess(yaml);
 *     p.port("https"); p.cpuMs();
 */
import { readProcFile } from "../../src/controller/proc.ts";
import { MAIN, RUN_FLAGS } from "./controller.ts";

/** A running `scalwsd run`. */
export interface ScalwsdProcess extends AsyncDisposable {
  readonly pid: number;
  /** Event log lines so far. */
  readonly lines: string[];
  /** The bound port of listener `name` (from its `listening` event). */
  port(name: string): number;
  /** CPU time (user + system) the process has used so far, in ms (10 ms steps). */
  cpuMs(): Promise<number>;
  /** SIGTERM (a drain; or `signal`) and the exit status. */
  stop(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
}

/** Starts `scalwsd run` on `yaml` (listeners on port 0) and waits for its `started` event. */
export async function startScalwsdProcess(yaml: string): Promise<ScalwsdProcess> {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-proc-" });
  await Deno.writeTextFile(`${dir}/scalws.yaml`, yaml);
  const child = new Deno.Command(Deno.execPath(), {
    args: [...RUN_FLAGS, MAIN, "run", "--config", `${dir}/scalws.yaml`],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  const ports = new Map<string, number>();
  const { promise: up, resolve: started } = Promise.withResolvers<void>();
  const reading = (async () => {
    let rest = "";
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
      rest += chunk;
      const parts = rest.split("\n");
      rest = parts.pop()!;
      for (const l of parts) {
        lines.push(l);
        if (l.includes('"event":"listening"')) {
          const e = JSON.parse(l);
          ports.set(e.listener, Number(String(e.address).split(":").pop()));
        } else if (l.includes('"event":"started"')) started();
      }
    }
    started();
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([up, new Promise((r) => (timer = setTimeout(r, 20_000)))]);
  clearTimeout(timer);
  let status: Promise<Deno.CommandStatus> | undefined;
  const stop = (signal: Deno.Signal) =>
    status ??= (async () => {
      try {
        child.kill(signal);
      } catch { /* exited */ }
      const st = await child.status;
      await reading;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      return st;
    })();
  if (ports.size === 0) {
    await stop("SIGKILL");
    throw new Error(`scalwsd did not start:\n${lines.join("\n")}`);
  }
  return {
    pid: child.pid,
    lines,
    port(name) {
      const p = ports.get(name);
      if (p === undefined) throw new Error(`no listener "${name}"`);
      return p;
    },
    async cpuMs() {
      // Deno reads another process's /proc files only with all permissions, else via `cat`.
      const text = await readProcFile(`/proc/${child.pid}/stat`);
      if (text === null) throw new Error(`no /proc/${child.pid}/stat`);
      const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
      // utime and stime (fields 14 and 15) in clock ticks of 10 ms.
      return (Number(fields[11]) + Number(fields[12])) * 10;
    },
    stop: (signal = "SIGTERM") => stop(signal),
    async [Symbol.asyncDispose]() {
      await stop("SIGKILL");
    },
  };
}
