// The least privilege the gateway needs in Kubernetes, as RBAC PolicyRules. The Helm chart's Role/ClusterRole is
// checked against this list, and a test checks that every request the gateway makes is covered by it.
// Namespaced (a Role per watched namespace) unless --namespaces '*' (then a ClusterRole). Secrets are read only
// with list/watch and a label selector; RBAC cannot restrict by label, which is why the selector is documented
// and the Role can be limited to the namespaces that hold gateway config.
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

export const REQUIRED_RULES: readonly PolicyRule[] = [
  {
    apiGroups: ['modelgateway.io'],
    resources: ['modelroutes', 'groups', 'gatewaytokens'],
    // get: re-read an object after a status write conflict.
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: ['modelgateway.io'],
    resources: ['modelroutes/status', 'groups/status', 'gatewaytokens/status'],
    verbs: ['patch'],
  },
  { apiGroups: [''], resources: ['secrets'], verbs: ['list', 'watch'] },
  // The leader's Warning Event on a Group or GatewayToken past a money limit's warnAt (create only: its name is
  // deterministic, and an existing one answers 409).
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
  // Leader election for status writing; only in the gateway's own namespace.
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
];

export interface ApiRequest {
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource?: string | undefined;
  readonly verb: string;
}

/** Whether `rules` allow the request (as the RBAC authorizer matches group, resource[/subresource] and verb). */
export function isAllowed(rules: readonly PolicyRule[], req: ApiRequest): boolean {
  const resource = req.subresource ? `${req.resource}/${req.subresource}` : req.resource;
  return rules.some(
    (r) =>
      (r.apiGroups.includes(req.apiGroup) || r.apiGroups.includes('*')) &&
      (r.resources.includes(resource) || r.resources.includes('*')) &&
      (r.verbs.includes(req.verb) || r.verbs.includes('*')),
  );
}
