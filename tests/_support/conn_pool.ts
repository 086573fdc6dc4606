/** HTTP/1.1 client pools in tests, closed when the test's `using` scope ends. */
import type { ConnPool } from "../../src/http1/mod.ts";

/** `pool`, closed (idle connections dropped) when disposed: `using pool = disposablePool(...)`. */
export function disposablePool<P extends ConnPool>(pool: P): P & Disposable {
  return Object.assign(pool, { [Symbol.dispose]: () => pool.close() });
}
