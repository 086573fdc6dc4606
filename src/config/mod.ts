/**
 * The configuration: YAML in (`load.ts`), the zod schema, defaults (`provision*.ts`),
 * cross-reference checks (`validate.ts`), and the frozen objects every other room reads
 * (`types.ts`); also the value grammars other rooms parse again (addresses, durations,
 * templates), certificate loading and the run-time member lists' rules. Errors name their path.
 * It builds nothing that serves requests.
 *
 * @module
 */

export { parseListenAddress, parseMemberAddress } from "./address.ts";
export {
  type KeyKind,
  loadCertificate,
  loadCertificates,
  type LoadedCertificate,
} from "./certificates.ts";
export { formatDuration, parseDuration } from "./duration.ts";
export { ConfigError, ValueError } from "./errors.ts";
export { deepFreeze } from "./freeze.ts";
export { parseUnit } from "./issues.ts";
export {
  dirOf,
  loadConfig,
  loadedError,
  type LoadFiles,
  parseConfig,
  placeProblems,
} from "./load.ts";
export { MAX_MEMBERS, poolMemberErrors, validateMembers } from "./members.ts";
export {
  BODY_TOO_LARGE,
  checkMembersBody,
  CONTROLLER_PUT_HEADER,
  MAX_MEMBERS_BODY,
  putTargetError,
} from "./members_put.ts";
export { parseTemplate, type TemplatePart } from "./parse_template.ts";
export { parseSize } from "./size.ts";
export { checkPattern, MAX_SUBJECT } from "./regex_safety.ts";
export { leaf } from "./schema.ts";
export type {
  AcmeConfig,
  AddressPolicy,
  AddressTarget,
  AppRuntime,
  BackendEntry,
  BasicAuthPolicy,
  CacheConfig,
  CompressPolicy,
  Config,
  CorsPolicy,
  DnsConfig,
  ErrorPagesPolicy,
  FastcgiTarget,
  FollowSymlinks,
  HeaderEdits,
  HeadersPolicy,
  HealthCheckConfig,
  HostPort,
  LimitReqConfig,
  LimitsConfig,
  LimitsStoreConfig,
  ListenerConfig,
  Loaded,
  MemberConfig,
  PhpRuntime,
  PolicyConfig,
  PoolConfig,
  ProxyRuntime,
  RedirectPolicy,
  RespondRuntime,
  RewritePolicy,
  RouteConfig,
  RuntimeConfig,
  StaticRuntime,
  TracingConfig,
} from "./types.ts";
