/**
 * What an operator can do about a listener that cannot bind, added to the system's reason:
 * a port below 1024 refused for want of permission needs root or `CAP_NET_BIND_SERVICE`.
 *
 * @module
 */

/** `; ...` advice for a bind of `port` that failed with `err`, or the empty string. */
export function bindHint(err: unknown, port: number): string {
  if (!(err instanceof Deno.errors.PermissionDenied) || port >= 1024) {
    return "";
  }
  return "; a port below 1024 needs root or the CAP_NET_BIND_SERVICE capability " +
    "(systemd: AmbientCapabilities=CAP_NET_BIND_SERVICE)";
}
