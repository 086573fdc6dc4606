/**
 * The front against Deno.serve (hyper): the same generated requests, valid and mutated, go to
 * scalwsd's own HTTP/1.1 front and to a `Deno.serve` listener; accept or refuse, and for
 * requests both accept the method, target, fields and body, must agree, except for the
 * differences listed (and justified) in docs/limits.md, section "HTTP/1.1 front".
 */
import assert from "node:assert/strict";
import { FrontAnswer } from "../src/front/answer.ts";
import {
  type ConnObserver,
  FrontConnection,
  type FrontHandler,
} from "../src/front/front_connection.ts";
import type { FrontRequest } from "../src/front/front_request.ts";
import { generateCases } from "../src/front/_fuzz.ts";

/** What a server made of one input: refused, or the request it read. */
interface Seen {
  accepted: boolean;
  method?: string;
  target?: string;
  fields?: string;
  body?: string;
}

const latin1 = (b: Uint8Array) => {
  let s = "";
  for (const c of b) s += String.fromCharCode(c);
  return s;
};

/** Fields as `Headers` shows them: lower-case names, sorted, repeats joined by ", ". */
function normalise(pairs: [string, string][]): string {
  const m = new Map<string, string>();
  for (const [k, v] of pairs) m.set(k, m.has(k) ? `${m.get(k)}, ${v}` : v);
  return JSON.stringify([...m].sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

const books: ConnObserver = {
  requestStarted() {},
  requestDone() {},
  linger() {},
  upgraded() {},
  halfClosed() {},
};

/** Sends `input` on a new connection to `port`; the first answer's status (0: none). */
async function exchange(port: number, input: string): Promise<number> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const bytes = Uint8Array.from(input, (c) => c.charCodeAt(0));
  const timer = setTimeout(() => conn.close(), 400);
  let text = "";
  try {
    await conn.write(bytes);
    const buf = new Uint8Array(4096);
    // Interim answers (100 Continue) are skipped: the final status counts.
    while (!/^(HTTP\/1\.[01] 1\d\d [^\r]*\r\n\r\n)*HTTP\/1\.[01] [2-5]\d\d /.test(text)) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += latin1(buf.subarray(0, n));
    }
  } catch {
    // closed by the timer or the server
  }
  clearTimeout(timer);
  try {
    conn.close();
  } catch { /* closed */ }
  const m = /^(?:HTTP\/1\.[01] 1\d\d [^\r]*\r\n\r\n)*HTTP\/1\.[01] (\d{3})/.exec(text);
  return m === null ? 0 : Number(m[1]);
}

Deno.test("front differential: the same inputs to the front and to Deno.serve", async () => {
  const cases = generateCases(7, 400).filter((c) => c.input.length < 60_000);
  let current: Seen | null = null;
  const deno = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const pairs: [string, string][] = [];
    req.headers.forEach((v, k) => pairs.push([k, v]));
    const u = new URL(req.url);
    current = {
      accepted: true,
      method: req.method,
      target: u.pathname + u.search,
      fields: normalise(pairs),
      body: latin1(new Uint8Array(await req.arrayBuffer())),
    };
    return new Response("ok", { headers: { connection: "close" } });
  });
  const handler: FrontHandler = {
    draining: false,
    async serve(req: FrontRequest) {
      const body = req.body === null
        ? new Uint8Array(0)
        : new Uint8Array(await new Response(req.body).arrayBuffer());
      const f = req.head.fields;
      const pairs: [string, string][] = [];
      for (let i = 0; i < f.length; i += 2) pairs.push([f[i], f[i + 1]]);
      current = {
        accepted: true,
        method: req.method,
        target: req.target,
        fields: normalise(pairs),
        body: latin1(body),
      };
      return new FrontAnswer(200, [["connection", "close"]], new Uint8Array(0));
    },
    failed: () => new Response("", { status: 500 }),
  };
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const front = (async () => {
    for await (const conn of listener) new FrontConnection(conn, handler, books, false);
  })();
  const differences = new Map<string, number>();
  let agreed = 0;
  try {
    for (const c of cases) {
      current = null;
      const fs = await exchange(listener.addr.port, c.input);
      const f: Seen = fs === 200 && current !== null ? current : { accepted: false };
      current = null;
      const ds = await exchange(deno.addr.port, c.input);
      const d: Seen = ds === 200 && current !== null ? current : { accepted: false };
      const kind = ds === 0 && f.accepted && /[^\r]\n/.test(c.input)
        ? "Deno.serve waits on mixed line ends"
        : classify(c.input, f, d);
      if (kind === "same") agreed++;
      else differences.set(kind, (differences.get(kind) ?? 0) + 1);
    }
  } finally {
    listener.close();
    await front.catch(() => {});
    await deno.shutdown();
  }
  // Every difference must be one docs/limits.md lists.
  const unexplained = [...differences].filter(([k]) => !KNOWN.has(k));
  assert.deepEqual(unexplained, [], `differences: ${JSON.stringify([...differences])}`);
  assert.ok(agreed > cases.length / 2, `${agreed} of ${cases.length} agreed`);
});

/** Known, justified differences (docs/limits.md, "HTTP/1.1 front"). */
const KNOWN = new Set<string>([
  "h2c refused",
  "host Deno cannot make a URL of",
  "body of a GET or HEAD",
  "target as received",
  "a repeated field that starts empty",
  "a Content-Length of 16 digits or more",
  "two Host fields",
  "Deno.serve waits on mixed line ends",
]);

/** The authority of `input` (an absolute-form target's, else Host), null when it has none. */
function hostOf(input: string): string | null {
  const head = input.slice(0, input.search(/\n\r?\n/) + 1);
  const abs = /^\S+ https?:\/\/([^/?\s]*)/i.exec(head);
  if (abs !== null) return abs[1];
  const m = /\nhost:[ \t]*([^\r\n]*)/i.exec(head);
  return m === null ? null : m[1].trim();
}

/** Whether `host` makes a URL authority (what Deno.serve needs to build `req.url`). */
function urlHost(host: string | null): boolean {
  if (host === null || !/^[A-Za-z0-9.\-]+(:[0-9]+)?$/.test(host)) return false;
  try {
    return new URL(`http://${host}/`).host === host.toLowerCase();
  } catch {
    return false;
  }
}

/** "same", or the name of the difference between the front's reading `f` and Deno's `d`. */
function classify(input: string, f: Seen, d: Seen): string {
  if (f.accepted && !urlHost(hostOf(input))) return "host Deno cannot make a URL of";
  if (f.accepted === d.accepted) {
    if (!f.accepted) return "same";
    if (f.method !== d.method) return `method: ${input}`;
    if (f.fields !== d.fields) {
      // Deno drops the empty first value of a repeated field when it joins them.
      return /\n[^:\r\n]+:[ \t]*\r?\n/.test(input)
        ? "a repeated field that starts empty"
        : `fields: ${input}`;
    }
    if (f.target !== d.target) {
      // Deno percent-encodes, removes dot segments and fragments; the front passes the
      // target on and the pipeline normalises the path it routes by.
      const u = new URL(f.target === "*" ? "/*" : f.target!, "http://h");
      return u.pathname + u.search === d.target ? "target as received" : `target: ${input}`;
    }
    if (f.body !== d.body) {
      return (f.method === "GET" || f.method === "HEAD") && d.body === ""
        ? "body of a GET or HEAD"
        : `body: ${input}`;
    }
    return "same";
  }
  if (!f.accepted && /\nupgrade:[^\n]*h2c/i.test(input)) return "h2c refused";
  if (!f.accepted && /\ncontent-length:[ \t]*\d{16}/i.test(input)) {
    return "a Content-Length of 16 digits or more";
  }
  if (!f.accepted && (input.match(/\nhost:/gi) ?? []).length > 1) return "two Host fields";
  return `${f.accepted ? "front accepts" : "front refuses"}, Deno ${
    d.accepted ? "accepts" : "refuses"
  }: ${JSON.stringify(input.slice(0, 300))}`;
}
