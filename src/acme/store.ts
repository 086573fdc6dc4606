/**
 * What ACME keeps in `server.state_dir`, every file mode 0600, written atomically:
 *
 * - `acme/accounts/<host>-<hash>.json`: the account's private key (JWK) per directory URL.
 * - `acme/certificates/<first domain>-<hash>.pem`: the issued chain followed by its private
 *   key, one file so that a reader never pairs a new chain with an old key. `<hash>` is taken
 *   over the directory URL and the sorted domains.
 * - `acme/certificates/<...>.lock`: held by the instance ordering that certificate.
 * - `acme/challenges/<token>`: pending HTTP-01 tokens, for the other instances.
 */
import { createHash } from "node:crypto";
import { ensureDir, writeFileAtomic } from "../base/mod.ts";
import { type AccountKey, generateAccountKey, importAccountKey } from "./jws.ts";

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\r?\n?/g;
const KEY_BLOCK =
  /-----BEGIN (?:EC |RSA )?PRIVATE KEY-----[\s\S]*?-----END (?:EC |RSA )?PRIVATE KEY-----\r?\n?/;

function short(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 12);
}

/** The name of one certificate's files, from its directory and domains. */
export function certificateId(directory: string, domains: readonly string[]): string {
  const first = domains[0].replace(/[^a-z0-9.-]/gi, "_");
  return `${first}-${short(`${directory}\n${[...domains].sort().join("\n")}`)}`;
}

/** A stored chain and key, PEM. */
export interface StoredCertificate {
  readonly cert: string;
  readonly key: string;
}

export class AcmeStore {
  readonly root: string;

  constructor(stateDir: string) {
    this.root = `${stateDir}/acme`;
  }

  accountFile(directory: string): string {
    const host = URL.canParse(directory) ? new URL(directory).hostname : "directory";
    return `${this.root}/accounts/${host.replace(/[^a-z0-9.-]/gi, "_")}-${short(directory)}.json`;
  }

  certificateFile(id: string): string {
    return `${this.root}/certificates/${id}.pem`;
  }

  /** Where pending HTTP-01 tokens are shared between instances. */
  get challengeDir(): string {
    return `${this.root}/challenges`;
  }

  lockFile(id: string): string {
    return `${this.root}/certificates/${id}.lock`;
  }

  /** The account key for `directory`; a new one is made and stored when there is none. */
  async accountKey(directory: string): Promise<AccountKey> {
    const file = this.accountFile(directory);
    let text: string | undefined;
    try {
      text = await Deno.readTextFile(file);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    if (text !== undefined) {
      let jwk: JsonWebKey;
      try {
        jwk = JSON.parse(text);
      } catch {
        throw new Error(`${file}: not a JSON account key`);
      }
      return await importAccountKey(jwk).catch((err) => {
        throw new Error(`${file}: ${err.message}`);
      });
    }
    const made = await generateAccountKey();
    await ensureDir(`${this.root}/accounts`);
    await writeFileAtomic(file, JSON.stringify(made.privateJwk) + "\n", 0o600);
    return made.key;
  }

  /** The stored certificate `id`, or undefined when there is none; throws when unreadable. */
  async loadCertificate(id: string): Promise<StoredCertificate | undefined> {
    const file = this.certificateFile(id);
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return undefined;
      throw err;
    }
    const certs = text.match(CERT_BLOCK);
    const key = text.match(KEY_BLOCK);
    if (certs === null || key === null) {
      throw new Error(`${file}: must hold the certificate chain and its private key`);
    }
    return { cert: certs.join(""), key: key[0] };
  }

  async saveCertificate(id: string, c: StoredCertificate): Promise<void> {
    await ensureDir(`${this.root}/certificates`);
    const chain = c.cert.endsWith("\n") ? c.cert : `${c.cert}\n`;
    await writeFileAtomic(this.certificateFile(id), chain + c.key, 0o600);
  }
}
