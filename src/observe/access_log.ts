/**
 * JSON access log lines, batched: lines are joined and written at most every 100 ms or when 64 KiB
 * are pending, so the request path never waits on a write.
 */

const enc = new TextEncoder();

/** The fields of one line. `path` never carries the query string. */
export interface AccessRecord {
  tenant: string;
  app: string;
  /** The host asked for (lower case, no port); "" when the request named none. */
  host: string;
  /** `HTTP/1.0`, `HTTP/1.1` or `HTTP/2`. */
  protocol: string;
  method: string;
  path: string;
  status: number;
  bytes: number;
  /** Seconds. */
  duration: number;
  upstream_member: string;
  upstream_attempts: number;
  /** Seconds to connect to the last member tried (0: a kept-alive connection); -1: none. */
  upstream_connect: number;
  /** Seconds from the start of the last member attempt to its response head; -1: none. */
  upstream_header: number;
  client: string;
  /**
   * The cache's result (`hit`, `miss`, `stale`, ...; `hit-disk`, `stale-disk`, `collapsed-disk`
   * when read from the disk tier); `-` when the route has no cache.
   */
  cache: string;
  user_agent: string | null;
  referer: string | null;
  request_id: string;
  /** The request's trace id when `server.tracing` traced it; null: not traced (not written). */
  trace_id: string | null;
  /** `TLSv1.2`, `TLSv1.3` (`TLS` when not known), `-` in the clear. */
  tls: string;
  /** The cipher suite's IANA name; `-` in the clear or when not known. */
  tls_cipher: string;
  /** Whether the TLS session was resumed; false in the clear, null when not known. */
  tls_resumed: boolean | null;
  /** The SNI name the connection was opened with; `-` for none or when not known. */
  sni: string;
}

/** Seconds as `duration` writes them, or null (-1: nothing measured). */
function seconds(s: number): string {
  return s < 0 ? "null" : s.toFixed(6);
}

export class AccessLog {
  private pending: string[] = [];
  private size = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private out: { writeSync(p: Uint8Array): number } | null;

  /** `target`: `stdout`, `off`, or a file path (appended). */
  constructor(readonly target: string) {
    if (target === "off") this.out = null;
    else if (target === "stdout") this.out = Deno.stdout;
    else this.out = Deno.openSync(target, { append: true, create: true, write: true });
  }

  /**
   * Log rotation (SIGUSR1, SIGHUP): pending lines go to the file open now, then `target` is
   * opened again, so that after `mv access.log access.log.1` new lines go to a new
   * `access.log`, created with the mode of the file it replaces. Throws when it cannot be
   * opened; lines then keep going to the file open before.
   */
  reopen(): void {
    if (this.out === null || this.out === Deno.stdout) return;
    this.flush();
    const old = this.out as Deno.FsFile;
    const mode = (old.statSync().mode ?? 0o644) & 0o7777;
    let next: Deno.FsFile;
    try {
      next = Deno.openSync(this.target, { append: true, createNew: true, mode });
      // `mode` went through the umask: set it exactly on the file this call created.
      try {
        Deno.chmodSync(this.target, mode);
      } catch { /* the umask's mode stays */ }
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
      next = Deno.openSync(this.target, { append: true, write: true });
    }
    this.out = next;
    old.close();
  }

  get enabled(): boolean {
    return this.out !== null;
  }

  write(r: AccessRecord): void {
    if (this.out === null) return;
    const line = `{"time":"${new Date().toISOString()}","tenant":${
      JSON.stringify(r.tenant)
    },"app":${JSON.stringify(r.app)},"host":${
      JSON.stringify(r.host)
    },"protocol":"${r.protocol}","method":${JSON.stringify(r.method)},"path":${
      JSON.stringify(r.path)
    },"status":${r.status},"bytes":${r.bytes},"duration":${
      r.duration.toFixed(6)
    },"upstream_member":${
      JSON.stringify(r.upstream_member)
    },"upstream_attempts":${r.upstream_attempts},"upstream_connect":${
      seconds(r.upstream_connect)
    },"upstream_header":${seconds(r.upstream_header)},"client":${
      JSON.stringify(r.client)
    },"cache":"${r.cache}","user_agent":${
      r.user_agent === null ? "null" : JSON.stringify(r.user_agent)
    },"referer":${r.referer === null ? "null" : JSON.stringify(r.referer)},"request_id":${
      JSON.stringify(r.request_id)
    }${
      r.trace_id === null ? "" : `,"trace_id":"${r.trace_id}"`
    },"tls":"${r.tls}","tls_cipher":"${r.tls_cipher}","tls_resumed":${r.tls_resumed},"sni":${
      JSON.stringify(r.sni)
    }}\n`;
    this.pending.push(line);
    this.size += line.length;
    if (this.size >= 65536) this.flush();
    else if (this.timer === undefined) {
      const t = setTimeout(() => this.flush(), 100);
      Deno.unrefTimer(t as unknown as number);
      this.timer = t;
    }
  }

  flush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.out === null || this.pending.length === 0) return;
    const data = enc.encode(this.pending.join(""));
    this.pending = [];
    this.size = 0;
    let off = 0;
    while (off < data.length) off += this.out.writeSync(data.subarray(off));
  }

  close(): void {
    this.flush();
    if (this.out !== null && this.out !== Deno.stdout) (this.out as Deno.FsFile).close();
  }
}
