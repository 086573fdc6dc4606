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
import YAML from "yaml";
import { dirname } from "node:path";
import { ensureDir, writeFileAtomic } from "../src/base/mod.ts";
import { ingressConfig, statusPatches } from "../src/discovery/mod.ts";
import { log } from "../src/observe/mod.ts";
import { runKubeCommand } from "./kube_command.ts";
import { type KubeMode, type KubeStart, type KubeWatches, startKubeMode } from "./kube_mode.ts";
import { patchStatus } from "./kube_sync.ts";

const USAGE = `usage: scalwsd ingress --base-config FILE --config-out FILE [--kubeconfig FILE]
    [--ingress-class NAME] [--https-address ADDR] [--publish-status-address ADDR[,ADDR...]]
  Watches Ingresses of class NAME (default scalwsd), Services, EndpointSlices and Secrets
  (in-cluster service account, or --kubeconfig), writes --config-out from --base-config and
  them, and serves it; endpoints change pool members through PUT, never a reload.
  --publish-status-address writes these IPs or host names to the Ingresses' status.loadBalancer.`;

/** What `startIngress` needs. */
export interface IngressOptions extends KubeStart {
  readonly ingressClass?: string;
  /** Adds a TLS listener on this address with the certificates of the Ingresses' Secrets. */
  readonly httpsAddress?: string;
}

/** A running ingress controller. */
export type Ingress = KubeMode;

const RESOURCES = {
  ingresses: "/apis/networking.k8s.io/v1/ingresses",
  services: "/api/v1/services",
  endpointSlices: "/apis/discovery.k8s.io/v1/endpointslices",
  secrets: "/api/v1/secrets",
} as const;

/** Starts the watches, writes the first configuration, then serves it. */
export async function startIngress(o: IngressOptions): Promise<Ingress> {
  const dir = dirname(o.configOut);
  const tlsDir = `${dir}/tls`;

  // deno-lint-ignore no-explicit-any
  const build = async (watches: KubeWatches<typeof RESOURCES>, base: any) => {
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
      await ensureDir(dirname(`${dir}/${f.name}`));
      await writeFileAtomic(`${dir}/${f.name}`, f.text, 0o600);
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

  /** Brings the served Ingresses' status to the published addresses; failures are logged. */
  const publish = async (_: unknown, watches: KubeWatches<typeof RESOURCES>) => {
    if (o.publishStatusAddresses === undefined) return;
    const patches = statusPatches(watches.ingresses.objects.values(), {
      ingressClass: o.ingressClass ?? "scalwsd",
      addresses: o.publishStatusAddresses,
    });
    for (const p of patches) {
      await patchStatus(
        o.kube,
        { ...p, what: `${p.namespace}/${p.name}` },
        "ingress_status",
        "ingress",
      );
    }
  };

  return await startKubeMode({ ...o, mode: "ingress", resources: RESOURCES, build, publish });
}

/** `scalwsd ingress ...`: serves until SIGTERM or SIGINT; returns the exit status. */
export function ingress(args: string[]): Promise<number> {
  return runKubeCommand({
    mode: "ingress",
    usage: USAGE,
    flags: ["ingress-class", "https-address"],
    start: (common, flags) =>
      startIngress({
        ...common,
        ...(flags["ingress-class"] ? { ingressClass: flags["ingress-class"] } : {}),
        ...(flags["https-address"] ? { httpsAddress: flags["https-address"] } : {}),
      }),
  }, args);
}
