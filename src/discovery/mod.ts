/**
 * Where member lists come from besides the configuration file: DNS (a small resolver of our own,
 * `dns_watch.ts` re-resolving a name on its TTL), Kubernetes (`k8s_watch.ts` watching Ingresses,
 * Services and EndpointSlices; `ingress_config.ts` turning them into a configuration;
 * `ingress_status.ts` the status written back; `gateway_model.ts`, `gateway_config.ts` and
 * `gateway_status.ts` the same for the Gateway API; `kube_pool.ts` the pool names and members
 * both share), and the run-time member lists kept in
 * `server.state_dir` (`member_state.ts`). It hands lists to pools; it does not choose members.
 *
 * @module
 */

export { type NameServer, systemNameServer } from "./dns_client.ts";
export { DnsWatch } from "./dns_watch.ts";
export { ANY_HOST_DOMAIN, gatewayConfig } from "./gateway_config.ts";
export { CONTROLLER_NAME, gatewayModel } from "./gateway_model.ts";
export { gatewayStatusPatches, routeStatusPatches } from "./gateway_status.ts";
export { ingressConfig, type IngressMember } from "./ingress_config.ts";
export { type KubeMember, nameOf, poolName } from "./kube_pool.ts";
export { statusPatches } from "./ingress_status.ts";
export { KubeWatch } from "./k8s_watch.ts";
export { MemberState, MemberStateError, type StoredMembers } from "./member_state.ts";
