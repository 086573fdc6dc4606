/**
 * Every key of the configuration file, from the zod schemas in `src/config/` (and the controller
 * file's in `src/controller/config.ts`), grouped by the mapping that holds it. The docs test
 * (`tests/docs_config_keys_test.ts`) checks that `docs/configuration.md` documents each one.
 *
 * Run `deno run --allow-read tools/config_keys.ts` to print them, one section per line.
 */
import type { z } from "zod";
import {
  applicationSchema,
  cacheSchema,
  poolSchema,
  routeSchema,
  runtimeSchema,
  serverSchema,
  tenantSchema,
} from "../src/config/schema.ts";
import { POLICY_SCHEMAS } from "../src/config/policies.ts";
import { controllerSchema } from "../src/controller/config.ts";

/** Section name -> the keys of that mapping, in schema order. */
export type KeyMap = Map<string, string[]>;

// deno-lint-ignore no-explicit-any
type Any = z.ZodTypeAny & { _def: any };

/** The schema under wrappers (optional, default, effects such as transform and refine). */
function unwrap(s: Any): Any {
  for (;;) {
    const t = s._def.typeName;
    if (t === "ZodOptional" || t === "ZodNullable" || t === "ZodDefault") s = s._def.innerType;
    else if (t === "ZodEffects") s = s._def.schema;
    else return s;
  }
}

/** Adds the keys of `schema` at `section`, and of the mappings (and lists of them) it holds. */
function walk(schema: Any, section: string, out: KeyMap): void {
  const s = unwrap(schema);
  if (s._def.typeName === "ZodArray") return walk(s._def.type, `${section}[]`, out);
  if (s._def.typeName !== "ZodObject") return;
  const shape = (s as unknown as z.AnyZodObject).shape;
  out.set(section, [...(out.get(section) ?? []), ...Object.keys(shape)]);
  for (const [key, value] of Object.entries(shape)) walk(value as Any, `${section}.${key}`, out);
}

/** The keys of the scalwsd configuration file. */
export function configKeys(): KeyMap {
  const out: KeyMap = new Map();
  walk(serverSchema as Any, "server", out);
  walk(POLICY_SCHEMAS.redirect as Any, "server.listeners[].redirect", out);
  walk(poolSchema as Any, "upstreams.NAME", out);
  // Members are checked by validateMembers (src/config/members.ts), not by zod.
  out.set("upstreams.NAME.members[]", ["address", "weight", "max_conns"]);
  walk(tenantSchema as Any, "tenants[]", out);
  walk(applicationSchema as Any, "applications[]", out);
  walk(routeSchema as Any, "routes[]", out);
  walk(cacheSchema as Any, "cache", out);
  for (const option of (runtimeSchema as Any)._def.options as Any[]) {
    const type = unwrap(option._def.shape().type)._def.value as string;
    walk(option, `runtime.${type}`, out);
  }
  for (const [name, schema] of Object.entries(POLICY_SCHEMAS)) {
    walk(schema as Any, `policies.${name}`, out);
  }
  return out;
}

/** The keys of the controller file. */
export function controllerKeys(): KeyMap {
  const out: KeyMap = new Map();
  walk(controllerSchema as Any, "controller", out);
  return out;
}

if (import.meta.main) {
  for (const [section, keys] of [...configKeys(), ...controllerKeys()]) {
    console.log(`${section}: ${keys.join(", ")}`);
  }
}
