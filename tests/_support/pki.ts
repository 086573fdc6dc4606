/** A throw-away certificate authority for TLS tests, removed when the test ends. */
import { makePki, type TestPki } from "../../src/base/_test_certs.ts";

export type { Issued, TestPki } from "../../src/base/_test_certs.ts";

/** `await using pki = await startPki();` (see `makePki`). */
export async function startPki(): Promise<TestPki & AsyncDisposable> {
  const pki = await makePki();
  return Object.assign(pki, { [Symbol.asyncDispose]: () => pki.close() });
}
