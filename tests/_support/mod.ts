/**
 * Test support for end-to-end tests (`tests/`): scalwsd started with `await using`, members,
 * clients, waiting, and YAML builders. Loopback and Unix sockets only.
 *
 * More specialised helpers are imported from their own files: `raw_conn.ts` (a raw HTTP/1.1
 * client connection), `raw_exchange.ts` (bytes out, every byte back), `recording_member.ts` (a
 * member that records exact bytes, a strict request reader), `bytes.ts`, `tls_client.ts`,
 * `keep_alive_load.ts`, `conn_pool.ts` (disposable HTTP/1 client pools), `php_fpm.ts`.
 */
export * from "./scalwsd.ts";
export * from "./members.ts";
export * from "./http.ts";
export * from "./wait.ts";
export * from "./yaml.ts";
export * from "./temp_dir.ts";
export * from "./pki.ts";
export * from "./cache.ts";
