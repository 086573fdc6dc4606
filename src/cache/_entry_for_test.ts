import { Entry } from "./entry.ts";

/** An entry for unit tests: `size` body bytes, fresh for `lifetime` s from `t`. */
export function entryForTest(
  opts: {
    size?: number;
    t?: number;
    lifetime?: number;
    owner?: string;
    select?: [string, string | null][];
    etag?: string | null;
    headers?: [string, string][];
  } = {},
): Entry {
  const t = opts.t ?? 1_000_000;
  return new Entry({
    status: 200,
    headers: opts.headers ?? [["content-type", "text/plain"]],
    body: new Uint8Array(opts.size ?? 10),
    requestTime: t,
    responseTime: t,
    dateValue: t,
    ageValue: 0,
    lifetime: opts.lifetime ?? 60,
    staleWhileRevalidate: 0,
    staleIfError: 0,
    noCache: false,
    mustRevalidate: false,
    etag: opts.etag ?? null,
    lastModified: null,
    selectNames: (opts.select ?? []).map((s) => s[0]),
    selectValues: (opts.select ?? []).map((s) => s[1]),
    owner: opts.owner ?? "t/a",
  });
}
