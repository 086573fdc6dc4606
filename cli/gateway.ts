/**
 * `scalwsd gateway`: scalwsd as a Kubernetes Gateway API controller (GatewayClass, Gateway,
 * HTTPRoute, ReferenceGrant; `gateway.networking.k8s.io/v1`), in one process, with the same
 * flags, watch client, pool naming and member updates as `scalwsd ingress`. It serves the
 * Gateways whose GatewayClass has `spec.controllerName: scalwsd.io/gateway-controller`: each
 * listener port P is a scalwsd listener on `--listen-host`:(P + `--port-offset`), the routes
 * become applications with listed routes (`src/discovery/gateway_config.ts`), the members of
 * the `p_<namespace>_<service>_<port>` pools are set through `PUT` (endpoint changes never
 * reload), and the status of every object of ours is written back.
 */
import YAML from "yaml";
import { dirname } from "node:path";
import { ensureDir, writeFileAtomic } from "../src/base/mod.ts";
import {
  CONTROLLER_NAME,
  gatewayConfig,
  gatewayModel,
  gatewayStatusPatches,
  routeStatusPatches,
} from "../src/discovery/mod.ts";
import { log } from "../src/observe/mod.ts";
import { runKubeCommand } from "./kube_command.ts";
import { type KubeMode, type KubeStart, type KubeWatches, startKubeMode } from "./kube_mode.ts";
import { patchStatus } from "./kube_sync.ts";

const USAGE = `usage: scalwsd gateway --base-config FILE --config-out FILE [--kubeconfig FILE]
    [--controller-name NAME] [--listen-host HOST] [--port-offset N]
    [--publish-status-address ADDR[,ADDR...]]
  Serves the Gateways of the GatewayClasses whose spec.controllerName is NAME (default
  ${CONTROLLER_NAME}) and their HTTPRoutes: a listener on port P listens on
  HOST (default 0.0.0.0) port P+N (default 8000: 80 -> 8080, 443 -> 8443). Writes
  --config-out from --base-config and them, serves it, writes the objects' status;
  endpoints change pool members through PUT, never a reload.`;

/** The default `--port-offset`: 80 -> 8080, 443 -> 8443 (a non-root pod binds them). */
export const DEFAULT_PORT_OFFSET = 8000;

/** Gateway port P on `host`:(P + offset), when that is a port number. */
export function offsetAddress(host: string, offset: number): (port: number) => string | undefined {
  return (port) => (port + offset <= 65535 ? `${host}:${port + offset}` : undefined);
}

/** What `startGateway` needs. */
export interface GatewayOptions extends KubeStart {
  /** Default `scalwsd.io/gateway-controller`. */
  readonly controllerName?: string;
  /**
   * The address a Gateway listener port is served on (undefined: none, the port is out of
   * range); default `0.0.0.0:<port + 8000>`.
   */
  readonly addressOf?: (port: number) => string | undefined;
}

/** A running Gateway API controller. */
export type Gateway = KubeMode;

const API = "/apis/gateway.networking.k8s.io/v1";
export const GATEWAY_WATCHES = {
  gatewayClasses: `${API}/gatewayclasses`,
  gateways: `${API}/gateways`,
  httpRoutes: `${API}/httproutes`,
  referenceGrants: `${API}/referencegrants`,
  services: "/api/v1/services",
  endpointSlices: "/apis/discovery.k8s.io/v1/endpointslices",
  secrets: "/api/v1/secrets",
  namespaces: "/api/v1/namespaces",
} as const;

/** Addresses the base configuration keeps for itself (metrics, the console). */
// deno-lint-ignore no-explicit-any
function reservedBy(base: any): Set<string> {
  return new Set(
    [base.server?.metrics?.address, base.server?.admin?.http?.address].filter((a) => a),
  );
}

/** Starts the watches, writes the first configuration, then serves it. */
export async function startGateway(o: GatewayOptions): Promise<Gateway> {
  const tlsDir = `${dirname(o.configOut)}/tls`;
  const addressOf = o.addressOf ?? offsetAddress("0.0.0.0", DEFAULT_PORT_OFFSET);
  type Watches = KubeWatches<typeof GATEWAY_WATCHES>;

  // deno-lint-ignore no-explicit-any
  const model = (watches: Watches, base: any) =>
    gatewayModel({
      gatewayClasses: watches.gatewayClasses.objects.values(),
      gateways: watches.gateways.objects.values(),
      httpRoutes: watches.httpRoutes.objects.values(),
      referenceGrants: watches.referenceGrants.objects.values(),
      services: watches.services.objects.values(),
      secrets: watches.secrets.objects.values(),
      namespaces: watches.namespaces.objects.values(),
      ...(o.controllerName ? { controllerName: o.controllerName } : {}),
      portAvailable: (port) => {
        const address = addressOf(port);
        return address !== undefined && !reservedBy(base).has(address);
      },
    });

  // deno-lint-ignore no-explicit-any
  const build = async (watches: Watches, base: any) => {
    const m = model(watches, base);
    const c = gatewayConfig(m, { endpointSlices: watches.endpointSlices.objects.values() });
    for (const w of c.warnings) log("warn", "gateway_warning", { warning: w });
    const doc = { ...base };
    doc.upstreams = { ...(base.upstreams ?? {}), ...c.upstreams };
    doc.tenants = [...(base.tenants ?? []), ...c.tenants];
    const server = { ...(base.server ?? {}) };
    if (c.defaultHost !== undefined && base.server?.default_host === undefined) {
      server.default_host = c.defaultHost;
    }
    const ours = [];
    // Addresses the base configuration keeps for itself (metrics, the console) are never taken:
    // one Gateway's port must not make every later configuration fail.
    const reserved = reservedBy(base);
    for (const l of c.listeners) {
      const address = addressOf(l.port);
      if (address === undefined || reserved.has(address)) {
        log("warn", "gateway_warning", {
          warning: `listener port ${l.port}: no address to serve it on (${
            address ?? "out of range"
          })`,
        });
        continue;
      }
      const listener: Record<string, unknown> = { name: l.name, address };
      if (l.https) {
        await ensureDir(tlsDir);
        const certificates = [];
        for (const cert of l.certificates) {
          const file = `${tlsDir}/${cert.id}`;
          await writeFileAtomic(`${file}.crt`, cert.cert);
          await writeFileAtomic(`${file}.key`, cert.key);
          certificates.push({ cert: `${file}.crt`, key: `${file}.key` });
        }
        listener.tls = { certificates };
      }
      ours.push(listener);
    }
    // A base listener on an address a Gateway port takes gives way to it.
    const taken = new Set(ours.map((l) => l.address));
    const kept = ((base.server?.listeners ?? []) as { address?: string }[]).filter((l) =>
      !taken.has(String(l.address))
    );
    server.listeners = [...kept, ...ours];
    doc.server = server;
    return { text: YAML.stringify(doc, { lineWidth: 0 }), members: c.members, model: m };
  };

  const publish = async ({ model: m }: { model: ReturnType<typeof model> }, watches: Watches) => {
    const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const patches = [
      ...gatewayStatusPatches(m, {
        now,
        ...(o.publishStatusAddresses ? { addresses: o.publishStatusAddresses } : {}),
      }),
      ...routeStatusPatches(m, watches.httpRoutes.objects.values(), {
        now,
        ...(o.controllerName ? { controllerName: o.controllerName } : {}),
      }),
    ];
    for (const p of patches) await patchStatus(o.kube, p, "gateway_status");
  };

  return await startKubeMode({ ...o, mode: "gateway", resources: GATEWAY_WATCHES, build, publish });
}

/** `scalwsd gateway ...`: serves until SIGTERM or SIGINT; returns the exit status. */
export function gateway(args: string[]): Promise<number> {
  const offsetOf = (flags: Readonly<Record<string, string | undefined>>) =>
    Number(flags["port-offset"] ?? DEFAULT_PORT_OFFSET);
  return runKubeCommand({
    mode: "gateway",
    usage: USAGE,
    flags: ["controller-name", "listen-host", "port-offset"],
    check: (flags) => {
      const offset = offsetOf(flags);
      return !Number.isInteger(offset) || offset < 0 || offset > 65534
        ? "--port-offset must be an integer 0..65534"
        : undefined;
    },
    start: (common, flags) => {
      const host = flags["listen-host"] ?? "0.0.0.0";
      return startGateway({
        ...common,
        addressOf: offsetAddress(host.includes(":") ? `[${host}]` : host, offsetOf(flags)),
        ...(flags["controller-name"] ? { controllerName: flags["controller-name"] } : {}),
      });
    },
  }, args);
}
