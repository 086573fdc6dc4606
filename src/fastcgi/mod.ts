/**
 * scalwsd's FastCGI client (what `type: php` speaks to PHP-FPM): records, the PARAMS stream, the
 * CGI head at the start of STDOUT, one Responder request (`fcgi_send.ts`) over a bounded, queued
 * set of connections to one FastCGI server (`conns.ts`) or over the HTTP/1 client's connection
 * pool. It decides no script names or params (`handlers/php*.ts`).
 *
 * @module
 */

export {
  activityOf,
  ClientTie,
  dropFcgiSeries,
  FcgiActivity,
  FcgiClientGone,
  FcgiConns,
  FcgiQueueFull,
  FcgiQueueTimeout,
  learnMaxChildren,
} from "./conns.ts";
export { type FcgiRequest, fcgiSend, type FcgiSendOptions } from "./fcgi_send.ts";
export { ParamsBuffer } from "./params.ts";
export type { StderrSink } from "./records_in.ts";
