/**
 * The values of a Kubernetes Secret's `data` (base64), as text: a TLS Secret's `tls.crt` and
 * `tls.key`, an htpasswd Secret's `auth`. Pure.
 */
import type { KubeObject } from "./k8s_watch.ts";

/** `data[key]` of `secret` decoded as UTF-8; undefined when absent or not base64. */
export function secretText(secret: KubeObject | undefined, key: string): string | undefined {
  // deno-lint-ignore no-explicit-any
  const b64 = (secret as any)?.data?.[key];
  if (typeof b64 !== "string") return undefined;
  try {
    return new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
  } catch {
    return undefined;
  }
}
