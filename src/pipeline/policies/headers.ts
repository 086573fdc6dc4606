/**
 * `headers`: sets, adds and removes request headers (before the handler) and response headers
 * (after it). Names and values were checked at load: no hop-by-hop or framing headers; `Host`
 * only through `request.set`, which replaces the Host the member receives (over
 * `preserve_host`). Values may use `$host`, `$path`, `$query`, `$scheme`.
 */
import type { HeaderEdits, HeadersPolicy } from "../../config/mod.ts";
import type { Exchange } from "../exchange.ts";
import { editHeaders } from "../request_view.ts";
import type { Policy } from "./policy.ts";
import { compileTemplate, render, type Rendered } from "./render_template.ts";

interface Compiled {
  readonly set: readonly (readonly [string, Rendered])[];
  readonly add: readonly (readonly [string, Rendered])[];
  readonly remove: readonly string[];
  readonly empty: boolean;
}

function compile(e: HeaderEdits): Compiled {
  const set = Object.entries(e.set).map(([k, v]) => [k, compileTemplate(v)] as const);
  const add = Object.entries(e.add).map(([k, v]) => [k, compileTemplate(v)] as const);
  return {
    set,
    add,
    remove: e.remove,
    empty: set.length + add.length + e.remove.length === 0,
  };
}

function apply(h: Pick<Headers, "set" | "append" | "delete">, c: Compiled, ex: Exchange): void {
  for (const name of c.remove) h.delete(name);
  for (const [name, v] of c.set) h.set(name, render(v, ex));
  for (const [name, v] of c.add) h.append(name, render(v, ex));
}

export function headersPolicy(cfg: HeadersPolicy): Policy {
  const req = compile(cfg.request);
  const res = compile(cfg.response);
  const hostSet = req.set.find(([k]) => k === "host");
  const reqSet = req.set.filter(([k]) => k !== "host");
  const reqEdits: Compiled = { ...req, set: reqSet };
  const policy: Policy = { name: "headers" };
  if (!req.empty) {
    policy.request = (ex: Exchange) => {
      if (hostSet !== undefined) ex.sendHost(render(hostSet[1], ex));
      if (reqEdits.set.length + reqEdits.add.length + reqEdits.remove.length > 0) {
        apply(editHeaders(ex), reqEdits, ex);
      }
      return null;
    };
  }
  if (!res.empty) {
    policy.response = (ex: Exchange, r: Response) => {
      apply(r.headers, res, ex);
      return r;
    };
  }
  return policy;
}
