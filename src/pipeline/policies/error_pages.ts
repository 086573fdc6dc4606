/**
 * `error_pages`: replaces the body of an error answer with a page read at load, keeping its
 * status and its other headers (`WWW-Authenticate`, `Allow`, `Retry-After`). By default only
 * scalwsd's own answers are replaced; with `intercept: true` members' answers too.
 */
import type { ErrorPagesPolicy } from "../../config/mod.ts";
import type { Exchange } from "../exchange.ts";
import { requestMethod } from "../request_view.ts";
import type { Policy } from "./policy.ts";

const DROP = ["content-length", "content-type", "content-encoding", "etag", "last-modified"];

export function errorPagesPolicy(cfg: ErrorPagesPolicy): Policy {
  const enc = new TextEncoder();
  const pages = new Map<number, { body: Uint8Array<ArrayBuffer>; type: string }>();
  for (const [status, page] of Object.entries(cfg.pages)) {
    pages.set(Number(status), { body: enc.encode(page.body), type: page.content_type });
  }
  return {
    name: "error_pages",
    response(ex: Exchange, res: Response) {
      const page = pages.get(res.status);
      if (page === undefined || (ex.fromMember && !cfg.intercept)) return res;
      const headers = new Headers(res.headers);
      for (const name of DROP) headers.delete(name);
      headers.set("content-type", page.type);
      // The original body is not needed; cancelling it releases the member's connection.
      res.body?.cancel().catch(() => {});
      const head = requestMethod(ex) === "HEAD";
      ex.sent(head ? 0 : page.body.length);
      return new Response(head ? null : page.body, { status: res.status, headers });
    },
  };
}
