/**
 * The CGI/1.1 params of one PHP request (RFC 3875 section 4.1 plus what PHP-FPM and nginx's
 * `fastcgi_params` add; docs/php.md has the table of each and its source). `HTTP_PROXY` is never set from a client's `Proxy` header (httpoxy),
 * and header names with `_` are not passed (they would collide with `-`, as nginx's
 * `underscores_in_headers off`).
 */

import { ParamsBuffer } from "../fastcgi/mod.ts";
import { type Exchange, pathStart, requestIdHeaderLower } from "../pipeline/mod.ts";
import type { Script } from "./php_script.ts";

/** What the params are built from besides the exchange. */
export interface ParamsInput {
  readonly script: Script;
  /** The resolved document root. */
  readonly root: string;
  /** Decoded normalised request path (`DOCUMENT_URI`). */
  readonly path: string;
  /** Body length in bytes; -1 for no body (`CONTENT_LENGTH` is then empty, as nginx's). */
  readonly contentLength: number;
  /** Configured extra params, added last. */
  readonly extra: Readonly<Record<string, string>>;
}

/** Upper case with `-` as `_`: `HTTP_` + this is the param of a header. */
function cgiName(header: string): string {
  let s = "HTTP_";
  for (let i = 0; i < header.length; i++) {
    const c = header.charCodeAt(i);
    s += c === 0x2d ? "_" : c >= 0x61 && c <= 0x7a ? String.fromCharCode(c - 32) : header[i];
  }
  return s;
}

/** Host without a port (brackets of an IPv6 literal kept), lower-cased as nginx's. */
function serverName(authority: string): string {
  let host = authority;
  if (authority.startsWith("[")) {
    const end = authority.indexOf("]");
    if (end >= 0) host = authority.slice(0, end + 1);
  } else {
    const colon = authority.lastIndexOf(":");
    if (colon >= 0) host = authority.slice(0, colon);
  }
  return host.toLowerCase();
}

/** The listener's port when known (as nginx's `$server_port`), else the Host header's. */
function serverPort(ex: Exchange): string {
  return ex.serverPort > 0 ? String(ex.serverPort) : hostPort(ex.authority, ex.secure);
}

function hostPort(authority: string, secure: boolean): string {
  const close = authority.lastIndexOf("]");
  const colon = authority.lastIndexOf(":");
  if (colon > close && colon < authority.length - 1) return authority.slice(colon + 1);
  return secure ? "443" : "80";
}

/** Writes the params into `out` (reset first). */
export function buildParams(out: ParamsBuffer, ex: Exchange, p: ParamsInput): void {
  out.reset();
  const s = p.script;
  const req = ex.req;
  const url = req.url;
  const query = ex.query.length > 0 ? ex.query.slice(1) : "";
  out.add("GATEWAY_INTERFACE", "CGI/1.1");
  out.add("SERVER_SOFTWARE", "scalwsd");
  out.add("SERVER_PROTOCOL", "HTTP/1.1");
  out.add("REQUEST_SCHEME", ex.secure ? "https" : "http");
  if (ex.secure) out.add("HTTPS", "on");
  out.add("SERVER_NAME", serverName(ex.authority));
  out.add("SERVER_PORT", serverPort(ex));
  out.add("SERVER_ADDR", ex.serverAddr);
  out.add("REMOTE_ADDR", ex.client);
  out.add("REMOTE_PORT", ex.remotePort > 0 ? String(ex.remotePort) : "");
  out.add("REQUEST_METHOD", req.method);
  out.add("REQUEST_URI", url.slice(pathStart(url)) || "/");
  out.add("DOCUMENT_URI", p.path);
  out.add("DOCUMENT_ROOT", p.root);
  out.add("SCRIPT_FILENAME", s.filename);
  out.add("SCRIPT_NAME", s.scriptName);
  out.add("PATH_INFO", s.pathInfo);
  if (s.pathInfo !== "") out.add("PATH_TRANSLATED", p.root + s.pathInfo);
  out.add("QUERY_STRING", query);
  out.add("REDIRECT_STATUS", "200");
  out.add("CONTENT_TYPE", req.headers.get("content-type") ?? "");
  out.add("CONTENT_LENGTH", p.contentLength >= 0 ? String(p.contentLength) : "");
  // A traced request: each attempt adds its own context (`traceContextParams`).
  const traced = ex.span !== null;
  const rid = requestIdHeaderLower();
  req.headers.forEach((value, name) => {
    if (name === "proxy" || name === "content-type" || name === "content-length") return;
    if (traced && (name === "traceparent" || name === "tracestate")) return;
    if (name === "host" || name === rid || name.includes("_")) return;
    out.add(cgiName(name), value);
  });
  // The request id as members get it (`server.request_id.header`): the access log's.
  out.add(cgiName(rid), ex.requestId);
  // The authority the request was routed by: an absolute-form target's replaces Host (RFC 9112
  // section 3.2.2); HTTP/2 carries it in the URL only.
  if (ex.authority !== "") out.add("HTTP_HOST", ex.authority);
  for (const name in p.extra) out.add(name, p.extra[name]);
}
