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
import { parseArgs } from "node:util";
import YAML from "yaml";
import { dirname } from "node:path";
import { AdminListeners, createAdminApp } from "../admin/mod.ts";
import { ensureDir, Usr1Watch, writeFileAtomic } from "../src/base/mod.ts";
import { ConfigError } from "../src/config/mod.ts";
import {
  CONTROLLER_NAME,
  gatewayConfig,
  gatewayModel,
  gatewayStatusPatches,
  KubeWatch,
  routeStatusPatches,
} from "../src/discovery/mod.ts";
import { log } from "../src/observe/mod.ts";
import { Server } from "../src/server/mod.ts";
import { warningsToEventLog } from "./console_warn.ts";
import { kubeConnection } from "./ingress.ts";
import { type KubeConnection, MemberPusher, patchStatus } from "./kube_sync.ts";

const USAGE = `usage: scalwsd gateway --base-config FILE --config-out FILE [--kubeconfig FILE]
    [--controller-name NAME] [--listen-host HOST] [--port-offset N]
    [--publish-status-address ADDR[,ADDR...]]
  Serves the Gateways of the GatewayClasses whose spec.controllerName is NAME (default
  ${CONTROLLER_NAME}) and their HTTPRoutes: a listener on port P listens on
  HOST (default 0.0.0.0) port P+N (default 8000: 80 -> 8080, 443 -> 8443). Writes
  --config-out from --base-config and them, serves it, writes the objects' status;
  endpoints change pool members through PUT, never a reload.`;

/** In-flight requests get this long after SIGTERM (the Deployment's grace period is longer). */
const DRAIN_TIMEOUT = 30_000;

/** The default `--port-offset`: 80 -> 8080, 443 -> 8443 (a non-root pod binds them). */
export const DEFAULT_PORT_OFFSET = 8000;

/** Gateway port P on `host`:(P + offset), when that is a port number. */
export function offsetAddress(host: string, offset: number): (port: number) => string | undefined {
  return (port) => (port + offset <= 65535 ? `${host}:${port + offset}` : undefined);
}

/** What `startGateway` needs. */
export interface GatewayOptions {
  readonly baseConfig: string;
  readonly configOut: string;
  readonly kube: KubeConnection;
  /** Default `scalwsd.io/gateway-controller`. */
  readonly controllerName?: string;
  /**
   * The address a Gateway listener port is served on (undefined: none, the port is out of
   * range); default `0.0.0.0:<port + 8000>`.
   */
  readonly addressOf?: (port: number) => string | undefined;
  /** Test hook: access log setting for the server. */
  readonly accessLog?: string;
  /** Written to `status.addresses` of the Gateways served (IPs or host names). */
  readonly publishStatusAddresses?: readonly string[];
  /** How long to wait for the first lists before serving anyway; default 15 s. */
  readonly initialSyncMs?: number;
}

/** A running Gateway API controller. */
export interface Gateway {
  readonly server: Server;
  readonly admin: AdminListeners;
  /** Syncs done that wrote a new configuration (the first one included). */
  readonly configWrites: () => number;
  /** Waits for the pending sync, if any. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

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

/** Starts the watches, writes the first configuration, then serves it. */
export async function startGateway(o: GatewayOptions): Promise<Gateway> {
  // deno-lint-ignore no-explicit-any
  const base = (YAML.parse(await Deno.readTextFile(o.baseConfig)) ?? {}) as any;
  const tlsDir = `${dirname(o.configOut)}/tls`;
  const addressOf = o.addressOf ?? offsetAddress("0.0.0.0", DEFAULT_PORT_OFFSET);
  let server: Server | undefined;
  let admin: AdminListeners | undefined;
  // Set once the server runs; the closures above it read it.
  // deno-lint-ignore prefer-const
  let app: ReturnType<typeof createAdminApp> | undefined;
  let lastText = "";
  let writes = 0;
  let pending: Promise<void> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const pusher = new MemberPusher(() => app!, () => server!, "gateway_members_refused");

  const watches = Object.fromEntries(
    Object.entries(GATEWAY_WATCHES).map(([k, path]) => [
      k,
      new KubeWatch({
        server: o.kube.server,
        path,
        headers: o.kube.headers,
        ...(o.kube.client ? { client: o.kube.client } : {}),
        onChange: () => schedule(),
      }),
    ]),
  ) as Record<keyof typeof GATEWAY_WATCHES, KubeWatch>;

  const model = () =>
    gatewayModel({
      gatewayClasses: watches.gatewayClasses.objects.values(),
      gateways: watches.gateways.objects.values(),
      httpRoutes: watches.httpRoutes.objects.values(),
      referenceGrants: watches.referenceGrants.objects.values(),
      services: watches.services.objects.values(),
      secrets: watches.secrets.objects.values(),
      namespaces: watches.namespaces.objects.values(),
      ...(o.controllerName ? { controllerName: o.controllerName } : {}),
    });

  const build = async () => {
    const m = model();
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
    const reserved = new Set(
      [base.server?.metrics?.address, base.server?.admin?.http?.address].filter((a) => a),
    );
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

  const publishStatus = async (m: ReturnType<typeof model>) => {
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

  const sync = async () => {
    const { text, members, model: m } = await build();
    if (text !== lastText) {
      await writeFileAtomic(o.configOut, text, 0o600);
      writes++;
      const r = await server!.reload();
      if (r.ok) {
        lastText = text;
        log("info", "gateway_reloaded", { generation: r.generationId });
      } else log("error", "gateway_config_refused", { errors: r.errors });
    }
    await pusher.push(members);
    await publishStatus(m);
  };

  function schedule(): void {
    if (server === undefined) return;
    clearTimeout(timer);
    // Events come in bursts (a rollout): one sync for a burst.
    timer = setTimeout(() => {
      pending = pending.then(sync).catch((err) =>
        log("error", "gateway_sync_failed", { error: String((err as Error)?.message ?? err) })
      );
    }, 50);
  }

  for (const w of Object.values(watches)) w.start();
  const until = Date.now() + (o.initialSyncMs ?? 15_000);
  while (Object.values(watches).some((w) => w.lists === 0) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const first = await build();
  await ensureDir(dirname(o.configOut));
  await writeFileAtomic(o.configOut, first.text, 0o600);
  writes++;
  lastText = first.text;
  try {
    server = await Server.prepare(o.configOut, o.accessLog ? { accessLog: o.accessLog } : {});
    await server.bind();
    admin = new AdminListeners(server);
    await admin.start();
  } catch (err) {
    for (const w of Object.values(watches)) await w.stop();
    await admin?.stop().catch(() => {});
    await server?.drain().catch(() => {});
    throw err;
  }
  app = createAdminApp(server, () => "gateway");
  await pusher.push(first.members);
  await publishStatus(first.model);
  schedule();
  return {
    server,
    admin,
    configWrites: () => writes,
    settled: async () => {
      await new Promise((r) => setTimeout(r, 80));
      await pending;
    },
    async stop() {
      clearTimeout(timer);
      for (const w of Object.values(watches)) await w.stop();
      await pending;
      await admin!.stop();
      await server!.drain();
      o.kube.client?.close();
    },
  };
}

/** `scalwsd gateway ...`: serves until SIGTERM or SIGINT; returns the exit status. */
export async function gateway(args: string[]): Promise<number> {
  warningsToEventLog();
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        "base-config": { type: "string" },
        "config-out": { type: "string" },
        kubeconfig: { type: "string" },
        "controller-name": { type: "string" },
        "listen-host": { type: "string" },
        "port-offset": { type: "string" },
        "publish-status-address": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (err) {
    console.error(`scalwsd gateway: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!values["base-config"] || !values["config-out"]) {
    console.error(`scalwsd gateway: --base-config and --config-out are required\n${USAGE}`);
    return 2;
  }
  const offset = Number(values["port-offset"] ?? DEFAULT_PORT_OFFSET);
  if (!Number.isInteger(offset) || offset < 0 || offset > 65534) {
    console.error(`scalwsd gateway: --port-offset must be an integer 0..65534\n${USAGE}`);
    return 2;
  }
  const host = values["listen-host"] ?? "0.0.0.0";
  const hostPart = host.includes(":") ? `[${host}]` : host;
  let running: Gateway;
  try {
    running = await startGateway({
      baseConfig: values["base-config"],
      configOut: values["config-out"],
      kube: await kubeConnection(values.kubeconfig),
      addressOf: offsetAddress(hostPart, offset),
      ...(values["controller-name"] ? { controllerName: values["controller-name"] } : {}),
      ...(values["publish-status-address"]
        ? {
          publishStatusAddresses: values["publish-status-address"].split(",").map((a) => a.trim())
            .filter((a) => a !== ""),
        }
        : {}),
    });
  } catch (err) {
    console.error(
      err instanceof ConfigError
        ? err.message
        : `scalwsd gateway: ${(err as Error).message ?? err}`,
    );
    return 1;
  }
  log("info", "gateway_started", { config: values["config-out"], pid: Deno.pid });
  const { promise, resolve } = Promise.withResolvers<string>();
  Deno.addSignalListener("SIGTERM", () => resolve("SIGTERM"));
  Deno.addSignalListener("SIGINT", () => resolve("SIGINT"));
  // SIGUSR1 is blocked (main.ts, blockUsr1): taken here, it never reaches Deno's inspector.
  const usr1 = new Usr1Watch(() => running.server.reopenLogs());
  const signal = await promise;
  usr1.stop();
  log("info", "draining", { signal, drain_timeout_ms: DRAIN_TIMEOUT });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const drained = await Promise.race([
    running.stop().then(() => true),
    new Promise<false>((r) => timer = setTimeout(() => r(false), DRAIN_TIMEOUT)),
  ]);
  clearTimeout(timer);
  if (!drained) {
    log("error", "drain_timeout", { drain_timeout_ms: DRAIN_TIMEOUT });
    return 3;
  }
  log("info", "stopped", {});
  return 0;
}
