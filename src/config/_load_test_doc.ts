/** Documents and helpers shared by the configuration loading tests. */
import assert from "node:assert/strict";
import { ConfigError } from "./errors.ts";
import { type LoadFiles, parseConfig } from "./load.ts";

// deno-lint-ignore no-explicit-any
export type Doc = any;

/** A small valid document, as plain data; YAML is a superset of JSON. */
export function base(): Doc {
  return {
    server: { listeners: [{ name: "http", address: "127.0.0.1:8080" }] },
    upstreams: { api: { members: [{ address: "192.0.2.5:8080" }] } },
    tenants: [{
      name: "acme",
      applications: [{
        name: "www",
        domains: ["example.com"],
        runtime: { type: "proxy", upstream: { pool: "api" } },
      }],
    }],
  };
}

/** The first application of the first tenant. */
export function app(doc: Doc): Doc {
  return doc.tenants[0].applications[0];
}

/**
 * A file system on which every `root` and `cwd` is a directory, for documents that name
 * directories of a server (`/srv/www`) rather than of the test machine.
 */
export const EVERY_DIR: LoadFiles = { stat: () => ({ isDirectory: true }) };

/** The errors `parseConfig` reports for `text`; fails the test if it is accepted. */
export function errorsOf(text: string, io: LoadFiles = {}): readonly string[] {
  try {
    parseConfig(text, "scalws.yaml", io);
  } catch (e) {
    if (e instanceof ConfigError) return e.errors;
    throw e;
  }
  assert.fail("the configuration was accepted");
}

export const A = "tenants[0].applications[0]";
export const RT = `${A}.runtime`;

/** The complete example of the guide. */
export const COMPLETE_EXAMPLE = `
server:
  listeners:
    - name: http
      address: "0.0.0.0:80"

upstreams:
  web:
    members:
      - {address: "192.0.2.5:8080", weight: 2}
      - {address: "192.0.2.6:8080"}
    balance: hash
    hash: {by: cookie}
    passive_health: {failures: 3, cooldown: 30s}
  api-stable:
    members: [{address: "198.51.100.5:9000"}, {address: "198.51.100.6:9000"}]
    retries: 2
  api-canary:
    members_from: api

tenants:
  - name: acme
    applications:
      - name: www
        domains: [example.com, www.example.com]
        runtime: {type: proxy, upstream: {pool: web}, response_timeout: 30s}
        routes:
          - path: /api
            runtime:
              type: proxy
              backends:
                - {pool: api-stable, weight: 90}
                - {pool: api-canary, weight: 10}
      - name: shop
        domains: [shop.example.com]
        runtime: {type: proxy, upstream: {pool: web}}
`;
