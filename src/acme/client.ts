/**
 * The transport of the ACME client (RFC 8555 §6): the directory, signed POSTs with a fresh
 * nonce each, a `badNonce` answer retried with the nonce it carries, POST-as-GET, problem
 * documents thrown as `AcmeProblem`, and the account (newAccount with the stored key).
 */
import { AcmeProblem, AcmeProtocolError } from "./errors.ts";
import { type AccountKey, type Signer, signJws } from "./jws.ts";
import { type Directory, parseDirectory, parseProblem } from "./messages.ts";
import { type Fetch, NoncePool } from "./nonce.ts";

/** A `badNonce` answer is retried this many times before it is an error. */
export const BAD_NONCE_RETRIES = 5;
/** Bytes of an answer body read at most (a certificate chain is a few KiB). */
const MAX_BODY = 1 << 20;

/** One answer, body read as text. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly url: string;
}

export interface AcmeClientOptions {
  /** The directory URL (`tls.acme.directory`). */
  readonly directoryUrl: string;
  readonly fetch: Fetch;
  readonly key: AccountKey;
}

async function readText(res: Response, url: string): Promise<string> {
  const len = Number(res.headers.get("content-length") ?? "0");
  if (len > MAX_BODY) {
    await res.body?.cancel();
    throw new AcmeProtocolError(`${url}: answer of ${len} bytes is too large`);
  }
  const text = await res.text();
  if (text.length > MAX_BODY) throw new AcmeProtocolError(`${url}: answer is too large`);
  return text;
}

export class AcmeClient {
  readonly key: AccountKey;
  /** The account URL once `account()` ran: requests are then signed with it (`kid`). */
  kid: string | undefined;
  private readonly nonces: NoncePool;
  private dir: Promise<Directory> | undefined;

  constructor(private readonly o: AcmeClientOptions) {
    this.key = o.key;
    this.nonces = new NoncePool(o.fetch, async () => (await this.directory()).newNonce);
  }

  /** The directory, fetched once. */
  directory(): Promise<Directory> {
    this.dir ??= (async () => {
      const url = this.o.directoryUrl;
      const res = await this.o.fetch(url, { method: "GET" });
      const text = await readText(res, url);
      if (!res.ok) throw new AcmeProtocolError(`${url}: directory answered ${res.status}`);
      return parseDirectory(text);
    })();
    this.dir.catch(() => (this.dir = undefined));
    return this.dir;
  }

  /**
   * A signed POST of `payload` (null: POST-as-GET). `badNonce` is retried with a new nonce;
   * any other problem is thrown as `AcmeProblem`.
   */
  async post(
    url: string,
    payload: unknown | null,
    opts: { readonly accept?: string; readonly signer?: Signer } = {},
  ): Promise<Answer> {
    const signer = opts.signer ?? (this.kid !== undefined ? { kid: this.kid } : undefined);
    if (signer === undefined) throw new Error("ACME client: no account yet");
    for (let attempt = 0;; attempt++) {
      const nonce = await this.nonces.take();
      const body = await signJws({ key: this.key, signer, nonce, url, payload });
      const headers: Record<string, string> = { "content-type": "application/jose+json" };
      if (opts.accept !== undefined) headers.accept = opts.accept;
      const res = await this.o.fetch(url, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
      });
      this.nonces.remember(res.headers);
      const text = await readText(res, url);
      if (res.status < 400) return { status: res.status, headers: res.headers, text, url };
      let problem;
      try {
        problem = parseProblem(text);
      } catch {
        throw new AcmeProtocolError(`${url}: answered ${res.status} without a problem document`);
      }
      const err = new AcmeProblem(
        problem.type,
        problem.detail,
        res.status,
        url,
        res.headers.get("retry-after"),
      );
      if (err.short === "badNonce" && attempt < BAD_NONCE_RETRIES) continue;
      throw err;
    }
  }

  /**
   * Finds or creates the account of this key (newAccount, terms agreed) and signs with it from
   * then on; returns its URL.
   */
  async account(email?: string): Promise<string> {
    const dir = await this.directory();
    if (dir.externalAccountRequired) {
      throw new AcmeProtocolError(
        `${this.o.directoryUrl}: the server requires external account binding, not supported`,
      );
    }
    const payload = {
      termsOfServiceAgreed: true,
      ...(email !== undefined ? { contact: [`mailto:${email}`] } : {}),
    };
    const res = await this.post(dir.newAccount, payload, { signer: { jwk: this.key.jwk } });
    const kid = res.headers.get("location");
    if (kid === null) throw new AcmeProtocolError(`${dir.newAccount}: no Location for the account`);
    this.kid = kid;
    return kid;
  }
}
