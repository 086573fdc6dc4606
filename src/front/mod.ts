/**
 * scalwsd's own HTTP/1.1 front, the server side that accepts clients' requests (the other front
 * is `Deno.serve`, for HTTP/2): `FrontConnection` reads and parses request heads strictly
 * (`parse_request_head.ts`), hands each `FrontRequest` to a handler, reads request bodies
 * (`read_*`) and writes answers in order (`write_*`), with the `server.limits` head checks and a
 * shared read-buffer pool. An `Answer` is what handlers give it: header pairs and bytes, or a
 * `Response`. It routes nothing (`pipeline/`, `server/`).
 *
 * @module
 */

export {
  type Answer,
  type AnswerBody,
  type AnswerForm,
  FRONT_FORM,
  FrontAnswer,
  type PullBody,
  pullStream,
  WEB_FORM,
  webResponse,
} from "./answer.ts";
export { DRAIN_IDLE_GRACE, FrontConnection, type FrontHandler } from "./front_connection.ts";
export { FrontRequest, NO_REQUEST } from "./front_request.ts";
export { type HeadLimits, headLimitStatus } from "./head_limits.ts";
