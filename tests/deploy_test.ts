/**
 * deploy/kubernetes/ and the Dockerfile: the manifests parse and agree with each other and with
 * scalwsd (ports, probe paths, names, the base configuration), RBAC only reads, the pod runs as
 * a non-root user on a read-only root filesystem, and its grace period covers preStop and drain.
 */
import assert from "node:assert/strict";
import YAML from "yaml";
import { parseConfig } from "../src/config/load.ts";
import { DEFAULT_PORT_OFFSET, GATEWAY_WATCHES } from "../cli/gateway.ts";
import { CONTROLLER_NAME } from "../src/discovery/mod.ts";

const DIR = new URL("../deploy/kubernetes/", import.meta.url).pathname;

// deno-lint-ignore no-explicit-any
type Obj = any;

function manifests(dir = DIR): Obj[] {
  const out: Obj[] = [];
  for (const e of [...Deno.readDirSync(dir)].sort((a, b) => a.name < b.name ? -1 : 1)) {
    if (!e.name.endsWith(".yaml")) continue;
    for (const doc of YAML.parseAllDocuments(Deno.readTextFileSync(dir + e.name))) {
      assert.deepEqual(doc.errors, [], e.name);
      const o = doc.toJS();
      if (o !== null) out.push(o);
    }
  }
  return out;
}

Deno.test("deploy/kubernetes: manifests parse and reference the right ports, paths and names", () => {
  const all = manifests();
  const one = (kind: string) => {
    const found = all.filter((o) => o.kind === kind);
    assert.equal(found.length, 1, `one ${kind}`);
    return found[0];
  };
  const ns = one("Namespace").metadata.name;
  const dep = one("Deployment");
  const svc = one("Service");
  const cm = one("ConfigMap");
  const pdb = one("PodDisruptionBudget");
  const sa = one("ServiceAccount");
  const role = one("ClusterRole");
  const binding = one("ClusterRoleBinding");
  assert.equal(one("IngressClass").metadata.name, "scalwsd");
  for (const o of [dep, svc, cm, pdb, sa]) assert.equal(o.metadata.namespace, ns, o.kind);

  // The base configuration is valid and its listeners are the container's ports.
  const base = cm.data["base.yaml"];
  const config = parseConfig(base, "base.yaml").config;
  const pod = dep.spec.template.spec;
  const c = pod.containers[0];
  const ports = Object.fromEntries(c.ports.map((p: Obj) => [p.name, p.containerPort]));
  assert.equal(config.server.listeners[0].port, ports.http);
  assert.equal(config.server.metrics.port, ports.metrics);
  assert.equal(c.args[0], "ingress");
  const arg = (flag: string) => c.args[c.args.indexOf(flag) + 1];
  assert.equal(arg("--https-address"), `0.0.0.0:${ports.https}`);
  const mounts = Object.fromEntries(c.volumeMounts.map((m: Obj) => [m.name, m.mountPath]));
  assert.equal(arg("--base-config"), `${mounts.base}/base.yaml`);
  assert.ok(arg("--config-out").startsWith(mounts.state + "/"));
  assert.ok(config.server.admin.socket!.startsWith(mounts.run + "/"));
  assert.equal(pod.volumes.find((v: Obj) => v.name === "base").configMap.name, cm.metadata.name);

  // Probes on the metrics listener; the Service's target ports exist.
  assert.deepEqual(c.readinessProbe.httpGet, { path: "/readyz", port: "metrics" });
  assert.deepEqual(c.livenessProbe.httpGet, { path: "/livez", port: "metrics" });
  for (const p of svc.spec.ports) assert.ok(ports[p.targetPort], `service port ${p.name}`);
  assert.deepEqual(
    svc.spec.ports.map((p: Obj) => [p.port, p.targetPort]),
    [[80, "http"], [443, "https"]],
  );

  // Selectors agree.
  const labels = dep.spec.template.metadata.labels;
  assert.deepEqual(dep.spec.selector.matchLabels, labels);
  assert.deepEqual(svc.spec.selector, labels);
  assert.deepEqual(pdb.spec.selector.matchLabels, labels);
  assert.ok(pdb.spec.minAvailable >= 1 && dep.spec.replicas > pdb.spec.minAvailable);

  // Non-root, read-only root filesystem, no privilege escalation.
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.ok(pod.securityContext.runAsUser > 0);
  assert.equal(c.securityContext.readOnlyRootFilesystem, true);
  assert.equal(c.securityContext.allowPrivilegeEscalation, false);
  assert.deepEqual(c.securityContext.capabilities.drop, ["ALL"]);

  // preStop plus the 30 s drain fit in the grace period.
  const pre = c.lifecycle.preStop.exec.command;
  assert.equal(pre[0], "/bin/sleep");
  assert.ok(pod.terminationGracePeriodSeconds > Number(pre[1]) + 30);

  // RBAC: reads of exactly what scalwsd ingress watches, and a patch of the Ingresses' status
  // (--publish-status-address) only; bound to the pod's account.
  const reads = role.rules.filter((r: Obj) => !r.resources.includes("ingresses/status"));
  for (const r of reads) assert.deepEqual(r.verbs, ["get", "list", "watch"]);
  assert.deepEqual(reads.flatMap((r: Obj) => r.resources).sort(), [
    "endpointslices",
    "ingressclasses",
    "ingresses",
    "secrets",
    "services",
  ]);
  const writes = role.rules.filter((r: Obj) => r.resources.includes("ingresses/status"));
  assert.deepEqual(writes.map((r: Obj) => [r.apiGroups, r.resources, r.verbs]), [
    [["networking.k8s.io"], ["ingresses/status"], ["patch"]],
  ]);
  assert.equal(pod.serviceAccountName, sa.metadata.name);
  assert.deepEqual(binding.subjects, [{
    kind: "ServiceAccount",
    name: sa.metadata.name,
    namespace: ns,
  }]);
  assert.equal(binding.roleRef.name, role.metadata.name);
});

Deno.test("deploy/kubernetes/gateway: scalwsd gateway's manifests agree with it and with the base", () => {
  const base = manifests();
  const all = manifests(DIR + "gateway/");
  const one = (kind: string) => {
    const found = all.filter((o) => o.kind === kind);
    assert.equal(found.length, 1, `one ${kind}`);
    return found[0];
  };
  const ns = base.find((o) => o.kind === "Namespace").metadata.name;
  const cm = base.find((o) => o.kind === "ConfigMap");
  const dep = one("Deployment");
  const svc = one("Service");
  const pdb = one("PodDisruptionBudget");
  const sa = one("ServiceAccount");
  const role = one("ClusterRole");
  const binding = one("ClusterRoleBinding");
  assert.deepEqual(one("GatewayClass").spec, { controllerName: CONTROLLER_NAME });
  for (const o of [dep, svc, pdb, sa]) assert.equal(o.metadata.namespace, ns, o.kind);

  const pod = dep.spec.template.spec;
  const c = pod.containers[0];
  assert.equal(c.args[0], "gateway");
  const arg = (flag: string) => c.args[c.args.indexOf(flag) + 1];
  const offset = Number(arg("--port-offset") ?? DEFAULT_PORT_OFFSET);
  const ports = Object.fromEntries(c.ports.map((p: Obj) => [p.name, p.containerPort]));
  // Gateway listener ports 80 and 443 land on the container ports the Service targets.
  assert.deepEqual(
    svc.spec.ports.map((p: Obj) => [p.port, ports[p.targetPort] - offset]),
    [[80, 80], [443, 443]],
  );
  // The base configuration (the ingress ConfigMap) is mounted; its plain listener is the one
  // port 80 replaces, and the metrics listener carries the probes.
  const mounts = Object.fromEntries(c.volumeMounts.map((m: Obj) => [m.name, m.mountPath]));
  assert.equal(arg("--base-config"), `${mounts.base}/base.yaml`);
  assert.equal(pod.volumes.find((v: Obj) => v.name === "base").configMap.name, cm.metadata.name);
  const config = parseConfig(cm.data["base.yaml"], "base.yaml").config;
  assert.equal(config.server.listeners[0].port, 80 + offset);
  assert.equal(config.server.metrics.port, ports.metrics);
  assert.ok(config.server.admin.socket!.startsWith(mounts.run + "/"));
  assert.ok(arg("--config-out").startsWith(mounts.state + "/"));
  assert.deepEqual(c.readinessProbe.httpGet, { path: "/readyz", port: "metrics" });

  // Selectors, security, grace period: as the ingress Deployment.
  const labels = dep.spec.template.metadata.labels;
  assert.deepEqual(dep.spec.selector.matchLabels, labels);
  assert.deepEqual(svc.spec.selector, labels);
  assert.deepEqual(pdb.spec.selector.matchLabels, labels);
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.equal(c.securityContext.readOnlyRootFilesystem, true);
  assert.deepEqual(c.securityContext.capabilities.drop, ["ALL"]);
  assert.ok(pod.terminationGracePeriodSeconds > Number(c.lifecycle.preStop.exec.command[1]) + 30);

  // RBAC: reads of exactly what scalwsd gateway watches; patches of the three status
  // subresources only.
  const reads = role.rules.filter((r: Obj) => r.verbs.includes("list"));
  for (const r of reads) assert.deepEqual(r.verbs, ["get", "list", "watch"]);
  const watched = Object.values(GATEWAY_WATCHES).map((p) => {
    const parts = p.split("/");
    return `${parts[1] === "api" ? "" : parts[2]}/${parts[parts.length - 1]}`;
  }).sort();
  assert.deepEqual(
    reads.flatMap((r: Obj) => r.resources.map((x: string) => `${r.apiGroups[0]}/${x}`)).sort(),
    watched,
  );
  const writes = role.rules.filter((r: Obj) => !r.verbs.includes("list"));
  assert.deepEqual(writes.map((r: Obj) => [r.apiGroups, r.resources, r.verbs]), [
    [
      ["gateway.networking.k8s.io"],
      ["gatewayclasses/status", "gateways/status", "httproutes/status"],
      ["patch"],
    ],
  ]);
  assert.equal(pod.serviceAccountName, sa.metadata.name);
  assert.deepEqual(binding.subjects, [{
    kind: "ServiceAccount",
    name: sa.metadata.name,
    namespace: ns,
  }]);
  assert.equal(binding.roleRef.name, role.metadata.name);
});

Deno.test("Dockerfile: a multi-stage build of the compiled binary that runs as a non-root user", () => {
  const text = Deno.readTextFileSync(new URL("../Dockerfile", import.meta.url));
  const froms = text.split("\n").filter((l) => l.startsWith("FROM "));
  assert.equal(froms.length, 2);
  assert.match(froms[0], / AS build$/);
  assert.match(text, /RUN deno task compile/);
  assert.match(text, /COPY --from=build \/src\/scalwsd \/usr\/local\/bin\/scalwsd/);
  const user = /^USER (\d+)/m.exec(text);
  assert.ok(user && Number(user[1]) > 0, "USER is a non-root uid");
  const dep = manifests().find((o) => o.kind === "Deployment");
  assert.equal(dep.spec.template.spec.securityContext.runAsUser, Number(user![1]));
  for (const port of [8080, 8443, 9090]) assert.match(text, new RegExp(`EXPOSE .*\\b${port}\\b`));
});

Deno.test("deploy/systemd: the controller unit and the sysctl file set net.ipv4.tcp_migrate_req to 1", () => {
  const dir = new URL("../deploy/systemd/", import.meta.url).pathname;
  const unit = Deno.readTextFileSync(dir + "scalwsd-controller.service");
  const line = (key: string) => unit.split("\n").filter((l) => l.startsWith(`${key}=`));
  assert.deepEqual(line("ExecStartPre"), [
    "ExecStartPre=+/usr/sbin/sysctl -w net.ipv4.tcp_migrate_req=1",
  ]);
  assert.deepEqual(line("ExecStart"), [
    "ExecStart=/usr/local/bin/scalwsd controller --config /etc/scalws/controller.yaml",
  ]);
  // Stopping the controller leaves the instances serving (re-adopted on the next start).
  assert.deepEqual(line("KillMode"), ["KillMode=process"]);
  const conf = Deno.readTextFileSync(dir + "99-scalwsd.conf").split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#"));
  assert.deepEqual(conf, ["net.ipv4.tcp_migrate_req = 1"]);
});
