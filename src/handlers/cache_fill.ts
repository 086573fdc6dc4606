/**
 * Bodies streamed through the cache: a miss copied aside while it goes to the client (`Fill`),
 * and the rest of a body that turned out too large to store (`Rest`).
 */
import type { Exchange } from "../pipeline/mod.ts";
import type { Admission } from "./cache_admission.ts";

/** Chunks already read, then the rest of a body, passed on unstored. */
export class Rest implements UnderlyingDefaultSource<Uint8Array> {
  constructor(
    private readonly chunks: Uint8Array[],
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
  ) {}

  async pull(c: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    const first = this.chunks.shift();
    if (first !== undefined) return c.enqueue(first);
    const r = await this.reader.read();
    if (r.done) c.close();
    else c.enqueue(r.value);
  }

  cancel(reason: unknown): Promise<void> {
    return this.reader.cancel(reason);
  }
}

/**
 * A streamed answer on its way to the client, copied aside for the store. A client that goes
 * away or a body that breaks drops the copy: an entry is stored whole or not at all.
 */
export class Fill implements UnderlyingDefaultSource<Uint8Array> {
  chunks: Uint8Array[] = [];
  size = 0;
  /** False once the body is over `max_object_size`: it streams on unstored. */
  keep = true;
  private settled = false;

  readonly ex: Exchange;
  readonly key: string;
  readonly admission: Admission;
  readonly lead: boolean;
  readonly expected: number;
  private readonly onEnd: (f: Fill, ok: boolean) => void;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly max: number;

  constructor(o: {
    /** Called once when the body ended (`ok`: whole) or was cancelled or broke. */
    onEnd: (f: Fill, ok: boolean) => void;
    ex: Exchange;
    key: string;
    admission: Admission;
    lead: boolean;
    reader: ReadableStreamDefaultReader<Uint8Array>;
    /** Content-Length, -1 when none. */
    expected: number;
    max: number;
  }) {
    this.onEnd = o.onEnd;
    this.ex = o.ex;
    this.key = o.key;
    this.admission = o.admission;
    this.lead = o.lead;
    this.reader = o.reader;
    this.expected = o.expected;
    this.max = o.max;
  }

  async pull(c: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      r = await this.reader.read();
    } catch (err) {
      this.settle(false);
      c.error(err);
      return;
    }
    if (r.done) {
      this.settle(true);
      c.close();
      return;
    }
    const v = r.value;
    if (this.keep) {
      this.size += v.length;
      if (this.size > this.max) {
        this.keep = false;
        this.chunks = [];
      } else this.chunks.push(v.slice());
    }
    c.enqueue(v);
  }

  cancel(reason: unknown): Promise<void> {
    this.settle(false);
    return this.reader.cancel(reason);
  }

  private settle(ok: boolean): void {
    if (this.settled) return;
    this.settled = true;
    this.onEnd(this, ok);
  }
}
