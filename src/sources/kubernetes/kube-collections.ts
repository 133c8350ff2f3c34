// The list side of each watched resource: a plain JSON request (kube-client.ts), authenticated by the client.
// Not the generated API classes: they would deserialise every page into typed models (Secrets with Date objects)
// that we would only turn back into JSON, a few times the memory of the page at the moment a large list arrives.
import { RESOURCE_NAMES } from '../../compile/resource-names.js';
import { API_GROUP, API_VERSION, type Kind } from '../../compile/resources.js';
import { kubeRequest, type KubeConfig } from './kube-client.js';
import type { ListPage, ResourceCollection } from './reflector.js';
import type { KubeObject } from './kube-object.js';

type RawList = { metadata?: { resourceVersion?: string; continue?: string }; items?: KubeObject[] };

async function listPage(kc: KubeConfig, path: string, query: Record<string, string | number | undefined>, timeoutMs: number | undefined): Promise<ListPage> {
  const list = await kubeRequest<RawList>(kc, path, { query, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
  return {
    // The reflector cuts each item down (kube-object.ts) as it takes the page, so the full objects die young.
    items: list.items ?? [],
    resourceVersion: list.metadata?.resourceVersion ?? '',
    continue: list.metadata?.continue || undefined,
  };
}

/** One of the three custom kinds in one namespace, or in all namespaces when `namespace` is undefined. */
export function customResourceCollection(kc: KubeConfig, kind: Kind, namespace: string | undefined, timeoutMs?: number): ResourceCollection {
  const plural = RESOURCE_NAMES[kind].plural;
  const path = namespace ? `/apis/${API_GROUP}/${API_VERSION}/namespaces/${namespace}/${plural}` : `/apis/${API_GROUP}/${API_VERSION}/${plural}`;
  return {
    kind,
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    description: `${plural} in ${namespace ?? 'all namespaces'}`,
    watchPath: path,
    list: ({ limit, continue: cont }) => listPage(kc, path, { limit, continue: cont }, timeoutMs),
  };
}

/** Secrets carrying the label selector (never every Secret), in one namespace or all. */
export function secretCollection(kc: KubeConfig, namespace: string | undefined, labelSelector: string, timeoutMs?: number): ResourceCollection {
  const path = namespace ? `/api/v1/namespaces/${namespace}/secrets` : '/api/v1/secrets';
  return {
    kind: 'Secret',
    apiVersion: 'v1',
    description: `secrets (${labelSelector}) in ${namespace ?? 'all namespaces'}`,
    watchPath: path,
    labelSelector,
    list: ({ limit, continue: cont }) => listPage(kc, path, { labelSelector, limit, continue: cont }, timeoutMs),
  };
}
