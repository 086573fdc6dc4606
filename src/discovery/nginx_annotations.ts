/**
 * ingress-nginx's `nginx.ingress.kubernetes.io/*` annotations on an Ingress, read for
 * `scalwsd ingress` (pure): what each one asks of the pools, the routes and the host, in
 * scalwsd's own terms (pool `balance`/`hash`/`scheme`, route `max_body`, proxy timeouts,
 * policies `rewrite`, `redirect`, `allow`, `basic_auth`, `cors`, the host's `limit_req`, canary
 * backends). `NGINX_ANNOTATIONS` lists every annotation with how far it is supported
 * (docs/kubernetes.md has the same table, a test compares them); an annotation it refuses or
 * does not know is a warning naming it, and the Ingress is served without it.
 */
import type { KubeObject } from "./k8s_watch.ts";
import { namespaceOf } from "./kube_pool.ts";
import { secretText } from "./kube_secret.ts";

/** The annotation prefix of ingress-nginx. */
export const NGINX = "nginx.ingress.kubernetes.io/";

/** How far scalwsd follows an annotation. */
export type Support = "supported" | "partial" | "refused";

/**
 * Every annotation scalwsd reads or refuses: its name, its support and how it maps, a row each
 * (an indented line goes on with the note above). docs/kubernetes.md has the same table; a test
 * compares them.
 */
const TABLE = `
rewrite-target          | supported | a \`rewrite\` regex from the path to the target,
                                      \`$1\`..\`$9\` captures (implies \`use-regex\`)
use-regex               | partial   | paths are regular expressions anchored at the start, checked
                                      for safety; the route is the literal prefix before the first
                                      special character (segment-aligned)
ssl-redirect            | supported | default \`true\` for a host with \`spec.tls\`: plain requests
                                      get \`308\` to \`https://\`
force-ssl-redirect      | supported | \`308\` to \`https://\` even without \`spec.tls\`
permanent-redirect      | supported | a \`redirect\` to the URL
permanent-redirect-code | supported | its status (default \`301\`)
temporal-redirect       | supported | a \`302\` \`redirect\` to the URL
affinity                | partial   | \`cookie\` only: the pool hashes by a cookie (\`balance:
                                      hash\`, \`by: cookie\`)
session-cookie-name     | supported | the cookie's name (default \`INGRESSCOOKIE\`)
session-cookie-max-age  | supported | \`cookie_max_age\` in seconds
load-balance            | partial   | \`round_robin\`; \`ewma\` and \`least_conn\` become
                                      \`least_conn\`
backend-protocol        | partial   | \`HTTP\`, \`HTTPS\` (pool \`scheme: https\`); \`GRPC\`,
                                      \`GRPCS\`, \`AJP\`, \`FCGI\` refused
proxy-body-size         | supported | the route's \`max_body\` (\`8m\`, \`1g\`, bytes); \`0\` leaves
                                      \`server.max_body\`
proxy-read-timeout      | partial   | \`response_timeout\` in seconds: until the response head, not
                                      between reads
proxy-connect-timeout   | supported | \`connect_timeout\` in seconds
whitelist-source-range  | supported | an \`allow\` policy of the CIDRs
allowlist-source-range  | supported | as \`whitelist-source-range\`
auth-type               | partial   | \`basic\` only; the Secret's \`auth\` htpasswd keeps its
                                      bcrypt lines (others refused)
auth-secret             | supported | \`name\` or \`namespace/name\` of the htpasswd Secret
auth-realm              | supported | the \`basic_auth\` realm
enable-cors             | supported | a \`cors\` policy
cors-allow-origin       | partial   | comma-separated origins (default \`*\`); with \`*\` no
                                      credentials
cors-allow-methods      | supported | the \`cors\` methods
cors-allow-headers      | supported | the \`cors\` headers
cors-expose-headers     | supported | the \`cors\` expose_headers
cors-allow-credentials  | supported | the \`cors\` credentials (default true)
cors-max-age            | supported | the \`cors\` max_age in seconds
canary                  | supported | this Ingress's backends join the main Ingress's path
canary-weight           | supported | weighted \`backends\` out of \`canary-weight-total\`
canary-weight-total     | supported | default \`100\`
canary-by-header        | supported | the header's \`always\` goes to the canary, \`never\` to the
                                      main backend
canary-by-header-value  | supported | this value goes to the canary instead
limit-rps               | partial   | the host's \`limit_req\` (per client address, for every path
                                      of the host), burst \`limit-burst-multiplier\` (default 5)
                                      times the rate
limit-burst-multiplier  | supported | the burst factor of \`limit-rps\`
configuration-snippet   | refused   | raw nginx configuration
server-snippet          | refused   | raw nginx configuration
auth-snippet            | refused   | raw nginx configuration
stream-snippet          | refused   | raw nginx configuration
`;

/** Every annotation scalwsd reads or refuses, with its support and how it maps. */
export const NGINX_ANNOTATIONS: Readonly<Record<string, { support: Support; note: string }>> =
  Object.fromEntries(
    TABLE.trim().replaceAll(/\n +/g, " ").split("\n").map((row) => {
      const [name, support, note] = row.split(" | ").map((c) => c.trim());
      return [name, { support: support as Support, note }];
    }),
  );

/** What one Ingress's annotations ask for. */
export interface IngressAnnotations {
  /** Settings of the pools its backends make. */
  readonly pool: Record<string, unknown>;
  /** Keys of the proxy runtime (`connect_timeout`, `response_timeout`). */
  readonly proxy: Record<string, unknown>;
  /** Policies of its routes, in order (redirects first). */
  readonly policies: Record<string, unknown>[];
  readonly maxBody?: number;
  /**
   * Plain requests go to `https://` (308): `force` always, `tls` for the hosts of `spec.tls`
   * when TLS is served (ingress-nginx's default), `off` never.
   */
  readonly sslRedirect: "force" | "tls" | "off";
  /** Its paths are regular expressions. */
  readonly regex: boolean;
  /** `rewrite-target`: the rewrite's `to`. */
  readonly rewriteTarget?: string;
  /** The host's `limit_req`. */
  readonly limitReq?: { rate: string; burst: number };
  /** `basic_auth`: a htpasswd file to write (relative to the configuration) and its text. */
  readonly authFile?: { readonly name: string; readonly text: string };
  /** Basic authentication was asked for but has no usable user: the paths answer 503. */
  readonly authBroken: boolean;
  /** `canary: "true"`. */
  readonly canary?: {
    readonly weight?: number;
    readonly total: number;
    readonly header?: string;
    readonly headerValue?: string;
  };
}

// deno-lint-ignore no-explicit-any
type Any = any;

/** nginx sizes: `1024`, `8k`, `10m`, `1g` (case-insensitive); undefined when unreadable. */
export function nginxSize(s: string): number | undefined {
  const m = /^(\d+)([kmg]?)$/i.exec(s.trim());
  if (m === null) return undefined;
  const unit = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2].toLowerCase()]!;
  return Number(m[1]) * unit;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const CIDR = /^[0-9a-fA-F:.]+(\/\d{1,3})?$/;
const ORIGIN = /^(\*|https?:\/\/(\*\.)?[a-z0-9.-]+(:\d+)?)$/;

/** How an annotation's value is read: what it must be (named in the warning) and its reading. */
interface ValueKind<T> {
  readonly what: string;
  /** The value in scalwsd's terms, or undefined when it is not one. */
  readonly read: (v: string) => T | undefined;
}

const SECONDS: ValueKind<string> = {
  what: "a number of seconds",
  read: (v) => (/^\d+$/.test(v.trim()) && Number(v) > 0 ? `${Number(v)}s` : undefined),
};
/** A cookie's max-age: 0 (expire at once) included. */
const COOKIE_SECONDS: ValueKind<string> = {
  what: "a number of seconds",
  read: (v) => (/^\d+$/.test(v) ? `${Number(v)}s` : undefined),
};
const COOKIE_NAME: ValueKind<string> = {
  what: "a cookie name",
  read: (v) => (TOKEN.test(v) ? v : undefined),
};
const SIZE: ValueKind<number> = { what: "a size", read: nginxSize };
const POSITIVE_INTEGER: ValueKind<number> = {
  what: "a positive integer",
  read: (v) => {
    const n = Number(v);
    return Number.isInteger(n) && n > 0 ? n : undefined;
  },
};

/** The proxy timeouts: annotation, then the proxy runtime's key. */
const PROXY_TIMEOUTS = [
  ["proxy-read-timeout", "response_timeout"],
  ["proxy-connect-timeout", "connect_timeout"],
] as const;

function list(s: string | undefined): string[] {
  return (s ?? "").split(",").map((x) => x.trim()).filter((x) => x !== "");
}

/**
 * Reads the annotations of `ing`. `hasTls`: the Ingress has a usable `spec.tls` entry (the
 * default of `ssl-redirect`). Secrets give `auth-secret`. Problems go to `warnings`.
 */
export function readAnnotations(
  ing: KubeObject,
  o: {
    readonly hasTls: boolean;
    readonly secrets: ReadonlyMap<string, KubeObject>;
    readonly warnings: string[];
  },
): IngressAnnotations {
  const all: Record<string, unknown> = (ing.metadata as Any).annotations ?? {};
  const who = `ingress ${namespaceOf(ing)}/${ing.metadata.name}`;
  const warn = (m: string) => o.warnings.push(`${who}: ${m}`);
  const get = (k: string): string | undefined => {
    const v = all[NGINX + k];
    return typeof v === "string" ? v : undefined;
  };
  for (const key of Object.keys(all)) {
    if (!key.startsWith(NGINX)) continue;
    const name = key.slice(NGINX.length);
    const known = NGINX_ANNOTATIONS[name];
    if (known === undefined) warn(`annotation ${key} is not supported; ignored`);
    else if (known.support === "refused") {
      warn(`annotation ${key} is refused (${known.note}); the Ingress is served without it`);
    }
  }
  /** Annotation `k` read as `kind`; undefined when absent, or (with a warning) not one. */
  const value = <T>(k: string, kind: ValueKind<T>): T | undefined => {
    const v = get(k);
    if (v === undefined) return undefined;
    const r = kind.read(v);
    if (r === undefined) warn(`${k} "${v}" is not ${kind.what}; ignored`);
    return r;
  };

  // Pools.
  const pool: Record<string, unknown> = {};
  const lb = (get("load-balance") ?? all["scalwsd.io/load-balance"]) as string | undefined;
  if (lb === "round_robin") pool.balance = "round_robin";
  else if (lb === "least_conn" || lb === "ewma") pool.balance = "least_conn";
  else if (lb === "hash") Object.assign(pool, { balance: "hash", hash: { by: "client_ip" } });
  else if (lb !== undefined) warn(`load-balance "${lb}" is not supported; round_robin`);
  const affinity = get("affinity") ?? (all["scalwsd.io/affinity"] as string | undefined);
  if (affinity === "cookie") {
    const hash: Record<string, unknown> = { by: "cookie" };
    // ingress-nginx's default name only when its own `affinity` asked for the cookie.
    const fallback = get("affinity") ? "INGRESSCOOKIE" : undefined;
    const name = get("session-cookie-name") === undefined
      ? fallback
      : value("session-cookie-name", COOKIE_NAME);
    if (name !== undefined) hash.name = name;
    const age = value("session-cookie-max-age", COOKIE_SECONDS);
    if (age !== undefined) hash.cookie_max_age = age;
    Object.assign(pool, { balance: "hash", hash });
  } else if (affinity !== undefined) warn(`affinity "${affinity}" is not supported; ignored`);
  const proto = (get("backend-protocol") ?? (all["scalwsd.io/backend-protocol"] as string))
    ?.toUpperCase();
  if (proto === "HTTPS") pool.scheme = "https";
  else if (proto !== undefined && proto !== "HTTP") {
    warn(`backend-protocol ${proto} is refused (HTTP and HTTPS only); HTTP`);
  }

  // Proxy.
  const proxy: Record<string, unknown> = {};
  for (const [k, key] of PROXY_TIMEOUTS) {
    const t = value(k, SECONDS);
    if (t !== undefined) proxy[key] = t;
  }

  // Route policies: redirects, address lists, authentication, CORS.
  const policies: Record<string, unknown>[] = [];
  const permanent = get("permanent-redirect");
  const temporal = get("temporal-redirect");
  if (permanent !== undefined || temporal !== undefined) {
    const to = (permanent ?? temporal)!;
    const code = permanent !== undefined ? Number(get("permanent-redirect-code") ?? 301) : 302;
    if (!/^https?:\/\/\S+$/.test(to)) {
      warn(`redirect target "${to}" is not an http(s) URL; ignored`);
    } else if (![301, 302, 303, 307, 308].includes(code)) {
      warn(`permanent-redirect-code ${code} is not a redirect status; ignored`);
    } else policies.push({ redirect: { to: to.replaceAll("$", "$$$$"), status: code } });
  }
  const ranges = list(get("whitelist-source-range") ?? get("allowlist-source-range"));
  if (ranges.length > 0) {
    const good = ranges.filter((r) => CIDR.test(r));
    if (good.length !== ranges.length) {
      warn(`source ranges ${ranges.join(",")}: some are not CIDRs`);
    }
    // Fail closed: a list with nothing usable allows no one.
    policies.push(good.length > 0 ? { allow: good } : { deny: ["0.0.0.0/0", "::/0"] });
  }
  let authFile: IngressAnnotations["authFile"];
  let authBroken = false;
  const authType = get("auth-type");
  if (authType !== undefined) {
    if (authType !== "basic") {
      warn(`auth-type ${authType} is refused (basic only); the paths answer 503`);
      authBroken = true;
    } else {
      const ref = get("auth-secret") ?? "";
      const key = ref.includes("/") ? ref : `${namespaceOf(ing)}/${ref}`;
      const secret = o.secrets.get(key);
      const text = secretText(secret, "auth");
      const lines = (text ?? "").split("\n").map((l) => l.trim()).filter((l) => l !== "");
      const bcrypt = lines.filter((l) => /^[^:]+:\$2[aby]\$\d\d\$/.test(l));
      if (lines.length > bcrypt.length) {
        warn(
          `auth-secret ${key}: ${lines.length - bcrypt.length} users without a bcrypt hash ` +
            `(htpasswd -B) are refused`,
        );
      }
      if (bcrypt.length === 0) {
        warn(`auth-secret ${key}: no usable user; the paths answer 503`);
        authBroken = true;
      } else {
        const name = `auth/${namespaceOf(ing)}_${ing.metadata.name}.htpasswd`
          .replace(/[^A-Za-z0-9_./-]/g, "-");
        authFile = { name, text: bcrypt.join("\n") + "\n" };
        // The realm is quoted in WWW-Authenticate: no quote, backslash or control character.
        const realm = [...(get("auth-realm") ?? "")].filter((ch) =>
          ch !== '"' && ch !== "\\" && ch.charCodeAt(0) >= 32 && ch.charCodeAt(0) !== 127
        ).join("");
        policies.push({ basic_auth: { users_file: name, ...(realm ? { realm } : {}) } });
      }
    }
  }
  if (get("enable-cors") === "true") {
    const origins = list(get("cors-allow-origin") ?? "*").filter((x) => ORIGIN.test(x));
    const credentials = (get("cors-allow-credentials") ?? "true") === "true" &&
      !origins.includes("*");
    const methods = list(get("cors-allow-methods") ?? "GET, PUT, POST, DELETE, PATCH, OPTIONS")
      .map((m) => m.toUpperCase()).filter((m) => /^[A-Z]+$/.test(m));
    const headers = list(
      get("cors-allow-headers") ??
        "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization",
    ).filter((h) => TOKEN.test(h));
    const expose = list(get("cors-expose-headers")).filter((h) => TOKEN.test(h));
    const maxAge = Number(get("cors-max-age") ?? 1728000);
    policies.push({
      cors: {
        origins: origins.length > 0 ? origins : ["*"],
        ...(methods.length > 0 ? { methods } : {}),
        ...(headers.length > 0 ? { headers } : {}),
        ...(expose.length > 0 ? { expose_headers: expose } : {}),
        credentials,
        ...(Number.isInteger(maxAge) && maxAge > 0 ? { max_age: `${maxAge}s` } : {}),
      },
    });
  }

  const body = value("proxy-body-size", SIZE);
  const maxBody = body !== undefined && body > 0 ? body : undefined;

  let limitReq: IngressAnnotations["limitReq"];
  const rps = value("limit-rps", POSITIVE_INTEGER);
  if (rps !== undefined) {
    const mult = Number(get("limit-burst-multiplier") ?? 5);
    limitReq = { rate: `${rps}r/s`, burst: rps * (Number.isInteger(mult) && mult > 0 ? mult : 5) };
  }

  const rewrite = get("rewrite-target");
  const tlsDefault = o.hasTls && get("ssl-redirect") !== "false";
  let canary: IngressAnnotations["canary"];
  const scalwsdWeight = all["scalwsd.io/canary-weight"];
  if (get("canary") === "true" || typeof scalwsdWeight === "string") {
    const w = get("canary-weight") ?? (scalwsdWeight as string | undefined);
    const total = Number(get("canary-weight-total") ?? 100);
    const weight = w === undefined ? undefined : Number(w);
    const header = get("canary-by-header");
    canary = {
      ...(weight !== undefined ? { weight } : {}),
      total: Number.isInteger(total) && total > 0 ? total : 100,
      ...(header !== undefined && TOKEN.test(header) ? { header } : {}),
      ...(get("canary-by-header-value") !== undefined
        ? { headerValue: get("canary-by-header-value") }
        : {}),
    };
  }
  return {
    pool,
    proxy,
    policies,
    ...(maxBody !== undefined ? { maxBody } : {}),
    sslRedirect: get("force-ssl-redirect") === "true" ? "force" : tlsDefault ? "tls" : "off",
    regex: get("use-regex") === "true" || rewrite !== undefined,
    ...(rewrite !== undefined ? { rewriteTarget: rewrite } : {}),
    ...(limitReq !== undefined ? { limitReq } : {}),
    ...(authFile !== undefined ? { authFile } : {}),
    authBroken,
    ...(canary !== undefined ? { canary } : {}),
  };
}

/**
 * A regex path's route prefix: the literal text before the first special character, without
 * a trailing `/`, when what follows starts a new segment (`/`, `(/|$)`, the end); else the
 * literal up to its last `/`. `partial` says the route is wider than the pattern.
 */
export function regexPrefix(pattern: string): { prefix: string; partial: boolean } {
  const m = /[\\^$.|?*+()[\]{}]/.exec(pattern);
  if (m === null) return { prefix: trimSlash(pattern), partial: false };
  const literal = pattern.slice(0, m.index);
  const rest = pattern.slice(m.index);
  if (literal.endsWith("/") || rest.startsWith("(/|$)") || rest.startsWith("(/")) {
    return {
      prefix: trimSlash(literal),
      partial: !literal.endsWith("/") && !rest.startsWith("(/|$)"),
    };
  }
  return { prefix: trimSlash(literal.slice(0, literal.lastIndexOf("/") + 1)), partial: true };
}

function trimSlash(p: string): string {
  const t = p.replace(/\/+$/, "");
  return t === "" ? "/" : t.startsWith("/") ? t : `/${t}`;
}
