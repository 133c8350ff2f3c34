// How the three kinds are named in the Kubernetes API: plural (the URL segment and RBAC resource), singular,
// short names and the category that makes `kubectl get modelgateway` list all three. Shared by the CRD
// generator, the Kubernetes config source, the status writer and the RBAC rules, so they cannot disagree.
import type { Kind } from './resources.js';

export interface ResourceNames {
  readonly kind: Kind;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
}

export const CATEGORY = 'modelgateway';

export const RESOURCE_NAMES: Readonly<Record<Kind, ResourceNames>> = {
  ModelRoute: { kind: 'ModelRoute', plural: 'modelroutes', singular: 'modelroute', shortNames: ['mroute', 'mr'] },
  Group: { kind: 'Group', plural: 'groups', singular: 'group', shortNames: ['mgroup'] },
  GatewayToken: { kind: 'GatewayToken', plural: 'gatewaytokens', singular: 'gatewaytoken', shortNames: ['gwtoken', 'gwt'] },
};
