/**
 * scalwsd's own CPU per request on the whole HTTP/1.1 path, in process: scalwsd's front reads
 * keep-alive GETs from an in-memory client connection, the dispatcher routes them, the proxy
 * sends them to an in-memory member, and the front writes the answers back; no socket, member
 * or load generator is measured. What this counts is what `get-64` costs scalwsd beyond the
 * socket calls (`floor` pays those too). The process's CPU time (not the wall clock) is read
 * per batch, and the median per request is printed; compare two builds by running them
 * alternately several times.
 *
 *     deno run -A bench/front_path_bench.ts [batches=30] [requests per batch=2000]
 *     MODE=close deno run -A bench/front_path_bench.ts    # a new connection per request
 */

import { batchArgs, interleaved, median } from "./_cpu_batches.ts";
import { frontPath } from "./_front_path.ts";

const CLOSE = Deno.env.get("MODE") === "close";
const REQUEST = new TextEncoder().encode(
  `GET / HTTP/1.1\r\nHost: a.test\r\n${CLOSE ? "Connection: close\r\n" : ""}\r\n`,
);

const { connection, registry } = frontPath(REQUEST);
const run = (n: number) => async () => {
  if (CLOSE) { for (let i = 0; i < n; i++) await connection(1); }
  else await connection(n);
};

const times = (await interleaved({ front: run }, batchArgs())).front;
console.log(
  `front ${CLOSE ? "close" : "get  "} ${median(times).toFixed(2)} us CPU/request ` +
    `(median of ${times.length}, min ${Math.min(...times).toFixed(2)})`,
);
registry.closeAll();
