/**
 * Certificates from an ACME server (RFC 8555) for `tls.acme`: `AcmeManager` keeps each
 * certificate issued and renewed on its schedule (account, order flow with JWS and nonces, CSR,
 * storage in `server.state_dir`, one instance ordering at a time), and `Http01Challenges`
 * answers HTTP-01 challenges on the plain-HTTP listeners. It does not serve TLS (`server/`).
 *
 * @module
 */

export { Http01Challenges } from "./http01.ts";
export { AcmeManager } from "./manager.ts";
