/**
 * Shared pieces of the route-policy tests: an echo member that answers with what it received,
 * and a config around one application.
 */
import { ConfigError } from "../../src/config/errors.ts";
import { parseConfig } from "../../src/config/load.ts";
import { type Member, startMember } from "./members.ts";

/** What the echo member saw. */
export interface Echo {
  method: string;
  path: string;
  headers: Record<string, string>;
}

/** A member answering `{method, path, headers}` as JSON (path with its query). */
export function echoMember(): Member {
  return startMember("echo", (req) => {
    const u = new URL(req.url);
    const echo: Echo = {
      method: req.method,
      path: u.pathname + u.search,
      headers: Object.fromEntries(req.headers),
    };
    return new Response(JSON.stringify(echo), { headers: { "content-type": "application/json" } });
  });
}

/** A scalwsd config with one application `app` on `site.test`; `body` is indented YAML. */
export function oneApp(runtime: string, body = "", extra = ""): string {
  return `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
${extra}
tenants:
  - name: t
    applications:
      - name: app
        domains: [site.test]
        runtime: ${runtime}
${body}
`;
}

export const HOST = { host: "site.test" };

/** The errors the configuration `yaml` (file `file`) is refused with; throws when it is accepted. */
export function configErrors(yaml: string, file = "scalws.yaml"): readonly string[] {
  try {
    parseConfig(yaml, file);
  } catch (e) {
    if (e instanceof ConfigError) return e.errors;
    throw e;
  }
  throw new Error(`${file} was accepted`);
}
