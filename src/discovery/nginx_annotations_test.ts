import assert from "node:assert/strict";
import type { KubeObject } from "./k8s_watch.ts";
import { NGINX, readAnnotations } from "./nginx_annotations.ts";

function ingress(annotations: Record<string, string>): KubeObject {
  const named = Object.fromEntries(Object.entries(annotations).map(([k, v]) => [NGINX + k, v]));
  return { metadata: { namespace: "a", name: "web", annotations: named } } as unknown as KubeObject;
}

Deno.test("readAnnotations reads each value by its kind and names a value it refuses", () => {
  const warnings: string[] = [];
  const a = readAnnotations(
    ingress({
      affinity: "cookie",
      "session-cookie-name": "bad name",
      "session-cookie-max-age": "0",
      "proxy-read-timeout": " 30 ",
      "proxy-connect-timeout": "0",
      "proxy-body-size": "8m",
      "limit-rps": "1.5",
    }),
    { hasTls: false, secrets: new Map(), warnings },
  );
  assert.deepEqual(a.pool, { balance: "hash", hash: { by: "cookie", cookie_max_age: "0s" } });
  assert.deepEqual(a.proxy, { response_timeout: "30s" });
  assert.equal(a.maxBody, 8 * 1024 * 1024);
  assert.equal(a.limitReq, undefined);
  assert.deepEqual(warnings, [
    'ingress a/web: session-cookie-name "bad name" is not a cookie name; ignored',
    'ingress a/web: proxy-connect-timeout "0" is not a number of seconds; ignored',
    'ingress a/web: limit-rps "1.5" is not a positive integer; ignored',
  ]);
});

Deno.test("readAnnotations gives ingress-nginx's defaults where a value is absent or zero", () => {
  const warnings: string[] = [];
  const a = readAnnotations(
    ingress({ affinity: "cookie", "proxy-body-size": "0", "limit-rps": "2" }),
    { hasTls: false, secrets: new Map(), warnings },
  );
  assert.deepEqual(a.pool, { balance: "hash", hash: { by: "cookie", name: "INGRESSCOOKIE" } });
  assert.equal(a.maxBody, undefined);
  assert.deepEqual(a.limitReq, { rate: "2r/s", burst: 10 });
  assert.deepEqual(warnings, []);
});
