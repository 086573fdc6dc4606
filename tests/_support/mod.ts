/**
 * Test support for end-to-end tests (`tests/`): scalwsd started with `await using`, members,
 * clients, waiting, and YAML builders. Loopback and Unix sockets only.
 */
export * from "./scalwsd.ts";
export * from "./members.ts";
export * from "./http.ts";
export * from "./wait.ts";
export * from "./yaml.ts";
export * from "./temp_dir.ts";
export * from "./pki.ts";
export * from "./cache.ts";
