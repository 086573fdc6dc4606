/**
 * The client's request body as handlers pull it, whichever front served the request: scalwsd's
 * own front hands its body over as it reads it from the socket (no stream), Deno.serve's
 * `Request` body stream is pulled the same way. One abstraction, two sources.
 */

import { FrontRequest } from "../front/mod.ts";
import { type BodyPull, StreamPull } from "../http1/mod.ts";
import type { ClientRequest } from "./exchange.ts";

/** The body of `req` to pull, or null when the request has none. */
export function requestBody(req: ClientRequest): BodyPull | null {
  if (req instanceof FrontRequest) {
    const input = req.input;
    if (input === null) return null;
    // Once something took it as a stream, it is read through that stream only.
    if (!input.streamed) return input;
  }
  const body = req.body;
  return body === null ? null : new StreamPull(body);
}
