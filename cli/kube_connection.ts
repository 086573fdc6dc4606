/**
 * Where the Kubernetes API server is and how `scalwsd ingress` and `scalwsd gateway` talk to it:
 * the in-cluster service account (token and CA), or the current context of a kubeconfig file.
 */
import YAML from "yaml";

/** Where the API server is and how to talk to it. */
export interface KubeConnection {
  readonly server: string;
  readonly headers: Record<string, string>;
  readonly client?: Deno.HttpClient;
}

const SA = "/var/run/secrets/kubernetes.io/serviceaccount";

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
  const text = await Deno.readTextFile(kubeconfig).catch((err) => {
    throw new Error(`--kubeconfig ${kubeconfig}: cannot read: ${(err as Error).message}`);
  });
  // deno-lint-ignore no-explicit-any
  const doc = YAML.parse(text) as any;
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
