/**
 * The Redis room: RESP2 (`resp.ts`) and a small pipelined client pool (`client.ts`) for the state
 * scalwsd shares beyond one process (shared `limit_req` counters). Other rooms import this face.
 */
export { RedisCallError, type RedisFailure, RedisPool, type RedisPoolState } from "./client.ts";
export type { RedisAddress, RedisPoolOptions } from "./client.ts";
export { encodeCommand, RespError, RespProtocolError, RespReader, type RespValue } from "./resp.ts";
