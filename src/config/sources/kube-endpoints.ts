// The list side of each watched resource, through the real @kubernetes/client-node API classes. The three kinds
// come back as plain JSON; typed core lists (Secrets) are turned back into plain JSON (dates as strings) so
// compile sees exactly what a manifest file would contain.
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { RESOURCE_NAMES } from '../resource-names.js';
import { API_GROUP, API_VERSION, type Kind } from '../resources.js';
import type { KubeObject, ListPage, ResourceEndpoint } from './reflector.js';

type RawList = { metadata?: { resourceVersion?: string; continue?: string; _continue?: string }; items?: unknown[] };

function toPage(list: unknown): ListPage {
  // JSON round trip: Date objects of typed models become RFC 3339 strings, and nothing typed leaks out.
  const plain = JSON.parse(JSON.stringify(list)) as RawList;
  return {
    items: (plain.items ?? []) as KubeObject[],
    resourceVersion: plain.metadata?.resourceVersion ?? '',
    continue: plain.metadata?.continue ?? plain.metadata?._continue ?? undefined,
  };
}

/** One of the three custom kinds in one namespace, or in all namespaces when `namespace` is undefined. */
export function customResourceEndpoint(kc: KubeConfig, kind: Kind, namespace: string | undefined): ResourceEndpoint {
  const api = kc.makeApiClient(CustomObjectsApi);
  const plural = RESOURCE_NAMES[kind].plural;
  const base = { group: API_GROUP, version: API_VERSION, plural };
  return {
    kind,
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    description: `${plural} in ${namespace ?? 'all namespaces'}`,
    watchPath: namespace ? `/apis/${API_GROUP}/${API_VERSION}/namespaces/${namespace}/${plural}` : `/apis/${API_GROUP}/${API_VERSION}/${plural}`,
    list: async ({ limit, continue: cont }) =>
      toPage(
        namespace
          ? await api.listNamespacedCustomObject({ ...base, namespace, limit, ...(cont ? { _continue: cont } : {}) })
          : await api.listClusterCustomObject({ ...base, limit, ...(cont ? { _continue: cont } : {}) }),
      ),
  };
}

/** Secrets carrying the label selector (never every Secret), in one namespace or all. */
export function secretEndpoint(kc: KubeConfig, namespace: string | undefined, labelSelector: string): ResourceEndpoint {
  const api = kc.makeApiClient(CoreV1Api);
  return {
    kind: 'Secret',
    apiVersion: 'v1',
    description: `secrets (${labelSelector}) in ${namespace ?? 'all namespaces'}`,
    watchPath: namespace ? `/api/v1/namespaces/${namespace}/secrets` : '/api/v1/secrets',
    labelSelector,
    list: async ({ limit, continue: cont }) =>
      toPage(
        namespace
          ? await api.listNamespacedSecret({ namespace, labelSelector, limit, ...(cont ? { _continue: cont } : {}) })
          : await api.listSecretForAllNamespaces({ labelSelector, limit, ...(cont ? { _continue: cont } : {}) }),
      ),
  };
}
