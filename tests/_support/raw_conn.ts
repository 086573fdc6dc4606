/** A raw HTTP/1.1 client connection for limit tests: write bytes, read responses, see closes. */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface RawHttpResponse {
  readonly status: number;
  readonly head: string;
  readonly body: string;
}

export class RawConn implements AsyncDisposable {
  private buf = "";
  private reading: Promise<void> | null = null;
  /** The server closed (or reset) the connection. */
  closed = false;

  private constructor(readonly conn: Deno.TcpConn) {}

  static async open(port: number): Promise<RawConn> {
    return new RawConn(await Deno.connect({ hostname: "127.0.0.1", port }));
  }

  async write(text: string | Uint8Array): Promise<void> {
    const bytes = typeof text === "string" ? encoder.encode(text) : text;
    let done = 0;
    while (done < bytes.length) done += await this.conn.write(bytes.subarray(done));
  }

  /** One read in flight at a time; its bytes land in `buf` whenever it completes. */
  private read(): Promise<void> {
    if (this.reading !== null) return this.reading;
    const chunk = new Uint8Array(65536);
    this.reading = this.conn.read(chunk).then(
      (n) => {
        if (n === null) this.closed = true;
        else this.buf += decoder.decode(chunk.subarray(0, n));
      },
      () => {
        this.closed = true;
      },
    ).finally(() => (this.reading = null));
    return this.reading;
  }

  /** Waits for more bytes or a close, at most until `deadline`; false when time ran out. */
  private async more(deadline: number): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((
      r,
    ) => (timer = setTimeout(() => r("late"), Math.max(1, deadline - Date.now()))));
    const r = await Promise.race([this.read(), late]);
    clearTimeout(timer);
    return r !== "late";
  }

  /** One response with a Content-Length body (or none), within `ms`; null if none came. */
  async response(ms = 5000): Promise<RawHttpResponse | null> {
    const deadline = Date.now() + ms;
    for (;;) {
      const end = this.buf.indexOf("\r\n\r\n");
      if (end >= 0) {
        const head = this.buf.slice(0, end);
        const m = /\r\ncontent-length: *(\d+)/i.exec(head);
        const len = m ? Number(m[1]) : 0;
        if (this.buf.length >= end + 4 + len) {
          const body = this.buf.slice(end + 4, end + 4 + len);
          this.buf = this.buf.slice(end + 4 + len);
          return { status: Number(head.split(" ")[1]), head, body };
        }
      }
      if (this.closed || !(await this.more(deadline))) return null;
    }
  }

  /** Waits at most `ms` for the server to close; the milliseconds it took, or -1. */
  async closedWithin(ms: number): Promise<number> {
    const start = performance.now();
    const deadline = Date.now() + ms;
    while (!this.closed && (await this.more(deadline)));
    return this.closed ? performance.now() - start : -1;
  }

  async close(): Promise<void> {
    try {
      this.conn.close();
    } catch {
      // closed already
    }
    if (this.reading !== null) await this.reading;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
