/**
 * The reason phrases scalwsd writes in its own status lines and plain answers: the RFC 9110
 * (section 15) phrase of each status it sends, the same ones Deno.serve writes. One table for
 * the HTTP/1.1 front's status line and the handlers' error bodies.
 */

const TEXTS: Record<number, string> = {
  100: "Continue",
  101: "Switching Protocols",
  102: "Processing",
  103: "Early Hints",
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  206: "Partial Content",
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  304: "Not Modified",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  413: "Content Too Large",
  414: "URI Too Long",
  416: "Range Not Satisfiable",
  421: "Misdirected Request",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** The reason phrase for `status`, "" for a status without one here. */
export function statusText(status: number): string {
  return TEXTS[status] ?? "";
}
