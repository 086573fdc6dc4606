/**
 * `scalwsd ingress`: scalwsd as a Kubernetes ingress controller, in one process. It watches
 * Ingresses (class `scalwsd`), Services, EndpointSlices and Secrets, writes a configuration
 * (the base file's `server` and own sections, plus the tenants, routes and pools the Ingresses
 * give), serves it, reloads only when that configuration changes, and sets the members of the
 * `p_<namespace>_<service>_<port>` pools through the admin API's `PUT` (marked
 * `x-scalws-source: kubernetes`): endpoint changes never reload. One process, so the first
 * configuration is written before the gateway reads it, and there is no second container to
 * keep in step.
 */
import { parseArgs } from "node:util";
import YAML from "yaml";
import { dirname } from "node:path";
import { AdminListeners, createAdminApp } from "../admin/mod.ts";
import { ensureDir, Usr1Watch, writeFileAtomic } from "../src/base/mod.ts";
import { ConfigError } from "../src/config/mod.ts";
import { warningsToEventLog } from "./console_warn.ts";
import { type KubeConnection, MemberPusher } from "./kube_sync.ts";
import { ingressConfig, KubeWatch, statusPatches } from "../src/discovery/mod.ts";
import { log } from "../src/observe/mod.ts";
import { Server } from "../src/server/mod.ts";

const USAGE = `usage: scalwsd ingress --base-config FILE --config-out FILE [--kubeconfig FILE]
    [--ingress-class NAME] [--https-address ADDR] [--publish-status-address ADDR[,ADDR...]]
  Watches Ingresses of class NAME (default scalwsd), Services, EndpointSlices and Secrets
  (in-cluster service account, or --kubeconfig), writes --config-out from --base-config and
  them, and serves it; endpoints change pool members through PUT, never a reload.
  --publish-status-address writes these IPs or host names to the Ingresses' status.loadBalancer.`;

export type { KubeConnection };

const SA = "/var/run/secrets/kubernetes.io/serviceaccount";

/** In-flight requests get this long after SIGTERM (the Deployment's grace period is longer). */
const DRAIN_TIMEOUT = 30_000;

/** The in-cluster connection (service account token and CA), or one from a kubeconfig file. */
export async function kubeConnection(kubeconfig?: string): Promise<KubeConnection> {
  if (kubeconfig === undefined) {
    const host = Deno.env.get("KUBERNETES_SERVICE_HOST");
    const port = Deno.env.get("KUBERNETES_SERVICE_PORT") ?? "443";
    if (!host) {
      throw new Error("not in a cluster (KUBERNETES_SERVICE_HOST unset): use --kubeconfig");
    }
    const token = (await Deno.readTextFile(`${SA}/token`)).trim();
    const ca = await Deno.readTextFile(`${SA}/ca.crt`);
    return {
      server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
      headers: { authorization: `Bearer ${token}` },
      client: Deno.createHttpClient({ caCerts: [ca] }),
    };
  }
  // deno-lint-ignore no-explicit-any
  const doc = YAML.parse(await Deno.readTextFile(kubeconfig)) as any;
  const ctxName = doc?.["current-context"];
  const ctx = (doc?.contexts ?? []).find((c: { name: string }) => c.name === ctxName)?.context ??
    doc?.contexts?.[0]?.context;
  const cluster = (doc?.clusters ?? []).find((c: { name: string }) => c.name === ctx?.cluster)
    ?.cluster ?? doc?.clusters?.[0]?.cluster;
  const user = (doc?.users ?? []).find((u: { name: string }) => u.name === ctx?.user)?.user ??
    doc?.users?.[0]?.user ?? {};
  if (typeof cluster?.server !== "string") throw new Error(`${kubeconfig}: no cluster server`);
  const token = user.token ??
    (user.tokenFile ? (await Deno.readTextFile(user.tokenFile)).trim() : undefined);
  let ca: string | undefined;
  if (cluster["certificate-authority-data"]) ca = atob(cluster["certificate-authority-data"]);
  else if (cluster["certificate-authority"]) {
    ca = await Deno.readTextFile(cluster["certificate-authority"]);
  }
  return {
    server: cluster.server,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    ...(ca ? { client: Deno.createHttpClient({ caCerts: [ca] }) } : {}),
  };
}

/** What `startIngress` needs. */
export interface IngressOptions {
  readonly baseConfig: string;
  readonly configOut: string;
  readonly kube: KubeConnection;
  readonly ingressClass?: string;
  /** Adds a TLS listener on this address with the certificates of the Ingresses' Secrets. */
  readonly httpsAddress?: string;
  /** Test hook: access log setting for the server. */
  readonly accessLog?: string;
  /** Written to `status.loadBalancer.ingress` of the Ingresses served (IPs or host names). */
  readonly publishStatusAddresses?: readonly string[];
  /** How long to wait for the first lists before serving anyway; default 15 s. */
  readonly initialSyncMs?: number;
}

/** A running ingress controller. */
export interface Ingress {
  readonly server: Server;
  readonly admin: AdminListeners;
  /** Syncs done that wrote a new configuration (the first one included). */
  readonly configWrites: () => number;
  /** Waits for the pending sync, if any. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

const RESOURCES = {
  ingresses: "/apis/networking.k8s.io/v1/ingresses",
  services: "/api/v1/services",
  endpointSlices: "/apis/discovery.k8s.io/v1/endpointslices",
  secrets: "/api/v1/secrets",
} as const;

/** Starts the watches, writes the first configuration, then serves it. */
export async function startIngress(o: IngressOptions): Promise<Ingress> {
  // deno-lint-ignore no-explicit-any
  const base = (YAML.parse(await Deno.readTextFile(o.baseConfig)) ?? {}) as any;
  const tlsDir = `${dirname(o.configOut)}/tls`;
  let server: Server | undefined;
  let admin: AdminListeners | undefined;
  // Set once the server runs; the closures above it read it.
  // deno-lint-ignore prefer-const
  let app: ReturnType<typeof createAdminApp> | undefined;
  let lastText = "";
  let writes = 0;
  let pending: Promise<void> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;

  const watches = Object.fromEntries(
    Object.entries(RESOURCES).map(([k, path]) => [
      k,
      new KubeWatch({
        server: o.kube.server,
        path,
        headers: o.kube.headers,
        ...(o.kube.client ? { client: o.kube.client } : {}),
        onChange: () => schedule(),
      }),
    ]),
  ) as Record<keyof typeof RESOURCES, KubeWatch>;

  const build = async () => {
    const c = ingressConfig({
      ingresses: watches.ingresses.objects.values(),
      services: watches.services.objects.values(),
      endpointSlices: watches.endpointSlices.objects.values(),
      secrets: watches.secrets.objects.values(),
      ...(o.ingressClass ? { ingressClass: o.ingressClass } : {}),
      tlsServed: o.httpsAddress !== undefined,
    });
    for (const w of c.warnings) log("warn", "ingress_warning", { warning: w });
    for (const f of c.files) {
      await ensureDir(dirname(`${dirname(o.configOut)}/${f.name}`));
      await writeFileAtomic(`${dirname(o.configOut)}/${f.name}`, f.text, 0o600);
    }
    const doc = { ...base };
    doc.upstreams = { ...(base.upstreams ?? {}), ...c.upstreams };
    doc.tenants = [...(base.tenants ?? []), ...c.tenants];
    if (c.defaultHost !== undefined) {
      if (base.server?.default_host === undefined) {
        doc.server = { ...(base.server ?? {}), default_host: c.defaultHost };
      } else {
        log("warn", "ingress_warning", {
          warning: `the base configuration's server.default_host wins over defaultBackend and ` +
            `rules without a host`,
        });
      }
    }
    if (o.httpsAddress !== undefined && c.certificates.length > 0) {
      await ensureDir(tlsDir);
      const certificates = [];
      for (const cert of c.certificates) {
        const file = `${tlsDir}/${cert.id}`;
        await writeFileAtomic(`${file}.crt`, cert.cert);
        await writeFileAtomic(`${file}.key`, cert.key);
        certificates.push({ cert: `${file}.crt`, key: `${file}.key`, domains: cert.domains });
      }
      doc.server = {
        ...(doc.server ?? {}),
        listeners: [
          ...(base.server?.listeners ?? []),
          { name: "ingress-https", address: o.httpsAddress, tls: { certificates } },
        ],
      };
    }
    return { text: YAML.stringify(doc, { lineWidth: 0 }), members: c.members };
  };

  const pusher = new MemberPusher(() => app!, () => server!, "ingress_members_refused");
  const putMembers = (members: Parameters<MemberPusher["push"]>[0]) => pusher.push(members);

  const sync = async () => {
    const { text, members } = await build();
    if (text !== lastText) {
      await writeFileAtomic(o.configOut, text, 0o600);
      writes++;
      const r = await server!.reload();
      if (r.ok) {
        lastText = text;
        log("info", "ingress_reloaded", { generation: r.generationId });
      } else log("error", "ingress_config_refused", { errors: r.errors });
    }
    await putMembers(members);
    await publishStatus();
  };

  /** Brings the served Ingresses' status to the published addresses; failures are logged. */
  const publishStatus = async () => {
    if (o.publishStatusAddresses === undefined) return;
    const patches = statusPatches(watches.ingresses.objects.values(), {
      ingressClass: o.ingressClass ?? "scalwsd",
      addresses: o.publishStatusAddresses,
    });
    for (const p of patches) {
      try {
        const res = await fetch(o.kube.server + p.path, {
          method: "PATCH",
          headers: { ...o.kube.headers, "content-type": "application/merge-patch+json" },
          body: p.body,
          signal: AbortSignal.timeout(10_000),
          ...(o.kube.client ? { client: o.kube.client } : {}),
        });
        const text = await res.text();
        if (!res.ok) {
          log("error", "ingress_status_refused", {
            ingress: `${p.namespace}/${p.name}`,
            status: res.status,
            body: text.slice(0, 200),
          });
        }
      } catch (err) {
        log("error", "ingress_status_failed", {
          ingress: `${p.namespace}/${p.name}`,
          error: String((err as Error)?.message ?? err),
        });
      }
    }
  };

  function schedule(): void {
    if (server === undefined) return;
    clearTimeout(timer);
    // Events come in bursts (a rollout): one sync for a burst.
    timer = setTimeout(() => {
      pending = pending.then(sync).catch((err) =>
        log("error", "ingress_sync_failed", { error: String((err as Error)?.message ?? err) })
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
  app = createAdminApp(server, () => "ingress");
  await putMembers(first.members);
  await publishStatus();
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

/** `scalwsd ingress ...`: serves until SIGTERM or SIGINT; returns the exit status. */
export async function ingress(args: string[]): Promise<number> {
  warningsToEventLog();
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        "base-config": { type: "string" },
        "config-out": { type: "string" },
        kubeconfig: { type: "string" },
        "ingress-class": { type: "string" },
        "https-address": { type: "string" },
        "publish-status-address": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (err) {
    console.error(`scalwsd ingress: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!values["base-config"] || !values["config-out"]) {
    console.error(`scalwsd ingress: --base-config and --config-out are required\n${USAGE}`);
    return 2;
  }
  let running: Ingress;
  try {
    running = await startIngress({
      baseConfig: values["base-config"],
      configOut: values["config-out"],
      kube: await kubeConnection(values.kubeconfig),
      ...(values["ingress-class"] ? { ingressClass: values["ingress-class"] } : {}),
      ...(values["https-address"] ? { httpsAddress: values["https-address"] } : {}),
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
        : `scalwsd ingress: ${(err as Error).message ?? err}`,
    );
    return 1;
  }
  log("info", "ingress_started", { config: values["config-out"], pid: Deno.pid });
  const { promise, resolve } = Promise.withResolvers<string>();
  Deno.addSignalListener("SIGTERM", () => resolve("SIGTERM"));
  Deno.addSignalListener("SIGINT", () => resolve("SIGINT"));
  // SIGUSR1 is blocked (main.ts, blockUsr1): taken here, it never reaches Deno's inspector.
  const usr1 = new Usr1Watch(() => running.server.reopenLogs());
  const signal = await promise;
  usr1.stop();
  log("info", "draining", { signal, drain_timeout_ms: DRAIN_TIMEOUT });
  // As `scalwsd run`: in-flight requests get the drain timeout, then the process ends anyway.
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
