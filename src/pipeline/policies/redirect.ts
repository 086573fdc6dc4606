/** `redirect`: answers with `Location` built from the template, status 308 by default. */
import type { RedirectPolicy } from "../../config/mod.ts";
import type { Exchange } from "../exchange.ts";
import type { Policy } from "./policy.ts";
import { compileTemplate, render } from "./render_template.ts";

/** The redirect answer for `ex`: no body, `Location` from the template. */
export function redirectPolicy(cfg: RedirectPolicy): Policy {
  const to = compileTemplate(cfg.to);
  const status = cfg.status;
  return {
    name: "redirect",
    request(ex: Exchange) {
      ex.answered(status, 0);
      return new Response(null, { status, headers: { location: render(to, ex) } });
    },
  };
}
