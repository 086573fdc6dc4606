/**
 * CPU per MiB of the `compress` policy's gzip (node:zlib, streamed in 64 KiB chunks as a
 * member body arrives) against nginx `gzip on` at the same `gzip_comp_level`, on the same
 * text: scalwsd's side is measured in process (the policy's stream alone, no sockets), nginx's
 * as the CPU ticks of its single process while it serves the file gzipped to a local client.
 * brotli at the policy's default quality 4 is printed for reference. Run on a quiet machine.
 *
 *     deno run -A bench/compress_bench.ts [level=6] [MiB per round=8] [rounds=5]
 */
import process from "node:process";
import zlib from "node:zlib";
import { compressStream } from "../src/pipeline/policies/compress.ts";
import { clockTicks, cpuTicks, findExecutable, freePorts, waitReady } from "./procs.ts";

const level = Number(Deno.args[0] ?? 6);
const mib = Number(Deno.args[1] ?? 8);
const rounds = Number(Deno.args[2] ?? 5);

/** Text that compresses like an API's JSON: repeated keys, varied numbers (seeded). */
function corpus(bytes: number): Uint8Array {
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
  let s = "";
  while (s.length < bytes) {
    s += `{"id":${next() % 100000},"name":"item-${next() % 977}","price":${
      (next() % 10000) / 100
    },"tags":["a${next() % 13}","b${next() % 7}"],"ok":${next() % 2 === 0}},\n`;
  }
  return new TextEncoder().encode(s.slice(0, bytes));
}

const body = corpus(1 << 20);
const CHUNK = 65536;

function source(): ReadableStream<Uint8Array> {
  let i = 0;
  const total = mib * (body.length / CHUNK);
  return new ReadableStream({
    pull(c) {
      if (i === total) return c.close();
      const off = (i++ * CHUNK) % body.length;
      c.enqueue(body.subarray(off, off + CHUNK));
    },
  });
}

async function policyUsPerMiB(make: () => zlib.Gzip | zlib.BrotliCompress): Promise<number> {
  const t0 = process.cpuUsage();
  const reader = compressStream(source(), make()).getReader();
  for (;;) if ((await reader.read()).done) break;
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / mib;
}

async function nginxUsPerMiB(): Promise<number | undefined> {
  const nginx = findExecutable("nginx");
  if (nginx === undefined) return undefined;
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-compress-bench-" });
  const [port] = freePorts(1);
  await Deno.writeFile(`${dir}/data.json`, body);
  const temps = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((t) => `  ${t}_temp_path ${dir}/${t};\n`).join("");
  await Deno.writeTextFile(
    `${dir}/nginx.conf`,
    `daemon off;\nmaster_process off;\npid ${dir}/nginx.pid;\nerror_log ${dir}/err.log warn;
events { worker_connections 64; }
http {
${temps}  access_log off;
  server {
    listen 127.0.0.1:${port};
    root ${dir};
    default_type application/json;
    gzip on; gzip_comp_level ${level}; gzip_types application/json; gzip_min_length 1000;
  }
}
`,
  );
  const proc = new Deno.Command(nginx, {
    args: ["-p", dir, "-c", `${dir}/nginx.conf`],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    let exited = false;
    proc.status.then(() => (exited = true));
    await waitReady(`http://127.0.0.1:${port}/data.json`, 5000, () => Promise.resolve(!exited));
    const hz = await clockTicks();
    const before = (await cpuTicks(proc.pid))!;
    for (let i = 0; i < mib; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/data.json`, {
        headers: { "accept-encoding": "gzip" },
      });
      if (res.headers.get("content-encoding") !== "gzip") throw new Error("nginx did not gzip");
      // Read the body (fetch decompresses it: client CPU, not nginx's).
      const r = res.body!.getReader();
      for (;;) if ((await r.read()).done) break;
    }
    const after = (await cpuTicks(proc.pid))!;
    const ticks = after.user + after.system - before.user - before.system;
    return (ticks / hz) * 1e6 / mib;
  } finally {
    proc.kill("SIGTERM");
    await proc.status;
    await Deno.remove(dir, { recursive: true });
  }
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1];
const gzip: number[] = [];
const br: number[] = [];
const ng: number[] = [];
for (let r = 0; r < rounds; r++) {
  gzip.push(await policyUsPerMiB(() => zlib.createGzip({ level })));
  br.push(
    await policyUsPerMiB(() =>
      zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } })
    ),
  );
  const n = await nginxUsPerMiB();
  if (n !== undefined) ng.push(n);
}
const ms = (us: number) => `${(us / 1000).toFixed(2)} ms CPU/MiB`;
console.log(`compress gzip level ${level}: ${ms(median(gzip))}`);
console.log(`compress brotli quality 4: ${ms(median(br))}`);
console.log(
  ng.length === 0
    ? "nginx: not installed"
    : `nginx gzip_comp_level ${level}: ${ms(median(ng))} (ratio ${
      (median(gzip) / median(ng)).toFixed(2)
    }x)`,
);
