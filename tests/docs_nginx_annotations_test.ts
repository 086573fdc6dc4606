/**
 * docs/kubernetes.md's table of ingress-nginx annotations names every annotation
 * `NGINX_ANNOTATIONS` knows, with the same support (supported, partial, refused), and no other.
 */
import assert from "node:assert/strict";
import { NGINX_ANNOTATIONS } from "../src/discovery/nginx_annotations.ts";

Deno.test("docs/kubernetes.md: the ingress-nginx annotation table matches the code", async () => {
  const text = await Deno.readTextFile(new URL("../docs/kubernetes.md", import.meta.url));
  const start = text.indexOf("## ingress-nginx annotations");
  assert.ok(start >= 0, "the section exists");
  const rows = new Map<string, string>();
  for (const line of text.slice(start).split("\n")) {
    const m = /^\| `([a-z0-9-]+)` +\| (supported|partial|refused) +\|/.exec(line);
    if (m !== null) rows.set(m[1], m[2]);
  }
  assert.deepEqual(
    Object.fromEntries([...rows].sort()),
    Object.fromEntries(Object.entries(NGINX_ANNOTATIONS).map(([k, v]) => [k, v.support]).sort()),
  );
  assert.equal(NGINX_ANNOTATIONS["configuration-snippet"].support, "refused");
});
