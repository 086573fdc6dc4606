/**
 * `deno task start`: two demo members on loopback and scalwsd in front of them, configured by
 * examples/scalwsd.yaml. Try:
 *
 *   curl http://127.0.0.1:8080/            # alternates between member a and member b
 *   curl -c jar -b jar http://127.0.0.1:8080/sticky   # stays on one member (affinity cookie)
 *   curl http://127.0.0.1:9090/metrics
 *   deno task run ctl --socket /tmp/scalwsd-demo/admin.sock upstreams
 */
import { run } from "../cli/run.ts";

function member(name: string, port: number): Deno.HttpServer {
  try {
    return Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, (req) => {
      const url = new URL(req.url);
      return new Response(
        `hello from member ${name} (127.0.0.1:${port}) for ${req.method} ${url.pathname}\n`,
        {
          headers: { "content-type": "text/plain; charset=utf-8" },
        },
      );
    });
  } catch (err) {
    // A second `deno task start`, or another program on the port: said in one line, exit 1.
    console.error(
      `demo: member ${name} cannot listen on 127.0.0.1:${port}: ${(err as Error).message} ` +
        "(is `deno task start` already running?)",
    );
    Deno.exit(1);
  }
}

await Deno.mkdir("/tmp/scalwsd-demo", { recursive: true });
const members = [member("a", 9101), member("b", 9102)];
const file = new URL("./scalwsd.yaml", import.meta.url).pathname;
console.error(
  "demo members on 127.0.0.1:9101 and 127.0.0.1:9102; scalwsd on http://127.0.0.1:8080/",
);
const code = await run(file);
await Promise.all(members.map((m) => m.shutdown()));
Deno.exit(code);
