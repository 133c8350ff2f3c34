// TEMPORARY copy of REQUIRED_RULES until src/config/sources/kubernetes-rbac.ts (the Kubernetes source) lands on
// main; rbac.test.ts then imports the real list and this file is deleted.
export interface PolicyRule {
  apiGroups: readonly string[];
  resources: readonly string[];
  verbs: readonly string[];
}

export const REQUIRED_RULES: readonly PolicyRule[] = [
  { apiGroups: ['modelgateway.io'], resources: ['modelroutes', 'groups', 'gatewaytokens'], verbs: ['get', 'list', 'watch'] },
  {
    apiGroups: ['modelgateway.io'],
    resources: ['modelroutes/status', 'groups/status', 'gatewaytokens/status'],
    verbs: ['patch'],
  },
  { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
];
