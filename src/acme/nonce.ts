/**
 * Anti-replay nonces (RFC 8555 §7.2): every answer's `Replay-Nonce` is kept for the next
 * request; when none is left, a `HEAD` of `newNonce` fetches one.
 */
import { AcmeProtocolError } from "./errors.ts";

/** Fetches an URL; `fetch` with the directory's TLS client in production. */
export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** At most this many unused nonces are kept (a server may send one with every answer). */
const KEEP = 8;

export class NoncePool {
  readonly #nonces: string[] = [];

  constructor(
    private readonly fetch: Fetch,
    /** The directory's `newNonce` URL, asked for when the pool is empty. */
    private readonly newNonceUrl: () => Promise<string>,
  ) {}

  /** Keeps the `Replay-Nonce` of an answer, if it has a well-formed one. */
  remember(headers: Headers): void {
    const n = headers.get("replay-nonce");
    if (n === null || !/^[A-Za-z0-9_-]+$/.test(n)) return;
    this.#nonces.push(n);
    if (this.#nonces.length > KEEP) this.#nonces.shift();
  }

  /** A nonce not used before: a kept one, else a new one from `newNonce`. */
  async take(): Promise<string> {
    const kept = this.#nonces.pop();
    if (kept !== undefined) return kept;
    const url = await this.newNonceUrl();
    const res = await this.fetch(url, { method: "HEAD" });
    await res.body?.cancel();
    const n = res.headers.get("replay-nonce");
    if (!res.ok || n === null || !/^[A-Za-z0-9_-]+$/.test(n)) {
      throw new AcmeProtocolError(
        `${url}: no usable Replay-Nonce (status ${res.status}, ${JSON.stringify(n)})`,
      );
    }
    return n;
  }

  get size(): number {
    return this.#nonces.length;
  }
}
