// The list side of each watched resource. Authentication and TLS come from the real @kubernetes/client-node
// (KubeConfig.applySecurityAuthentication: tokens, client certificates, exec/OIDC plugins, the cluster CA), the
// same way its Watch does; the request itself is a plain undici fetch of the collection's JSON. Not the generated
// API classes: they would deserialise every page into typed models (Secrets with Date objects) that we would
// only turn back into JSON, a few times the memory of the page at the moment a large list arrives.
import { HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { fetch } from 'undici';
import { RESOURCE_NAMES } from '../resource-names.js';
import { API_GROUP, API_VERSION, type Kind } from '../resources.js';
import type { KubeObject, ListPage, ResourceEndpoint } from './reflector.js';

type RawList = { metadata?: { resourceVersion?: string; continue?: string }; items?: unknown[] };

/** An HTTP failure of a list, with the status code where the reflector looks for it (410 Gone → relist). */
export class KubeListError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

async function listPage(kc: KubeConfig, path: string, query: Record<string, string | number | undefined>): Promise<ListPage> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('No currently active cluster');
  const url = new URL(cluster.server.replace(/\/+$/, '') + path);
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
  const ctx = new RequestContext(url.toString(), HttpMethod.GET);
  ctx.setHeaderParam('Accept', 'application/json');
  await kc.applySecurityAuthentication(ctx);
  const res = await fetch(url, { method: 'GET', headers: ctx.getHeaders(), dispatcher: ctx.getDispatcher() as never });
  if (res.status !== 200) {
    // The body may echo an object; only the status goes into the error (and from there into logs).
    await res.body?.cancel();
    throw new KubeListError(`list ${path}: HTTP ${res.status}`, res.status);
  }
  const list = (await res.json()) as RawList;
  return {
    // The reflector cuts each item down (kube-object.ts) as it takes the page, so the full objects die young.
    items: (list.items ?? []) as KubeObject[],
    resourceVersion: list.metadata?.resourceVersion ?? '',
    continue: list.metadata?.continue || undefined,
  };
}

/** One of the three custom kinds in one namespace, or in all namespaces when `namespace` is undefined. */
export function customResourceEndpoint(kc: KubeConfig, kind: Kind, namespace: string | undefined): ResourceEndpoint {
  const plural = RESOURCE_NAMES[kind].plural;
  const path = namespace ? `/apis/${API_GROUP}/${API_VERSION}/namespaces/${namespace}/${plural}` : `/apis/${API_GROUP}/${API_VERSION}/${plural}`;
  return {
    kind,
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    description: `${plural} in ${namespace ?? 'all namespaces'}`,
    watchPath: path,
    list: ({ limit, continue: cont }) => listPage(kc, path, { limit, continue: cont }),
  };
}

/** Secrets carrying the label selector (never every Secret), in one namespace or all. */
export function secretEndpoint(kc: KubeConfig, namespace: string | undefined, labelSelector: string): ResourceEndpoint {
  const path = namespace ? `/api/v1/namespaces/${namespace}/secrets` : '/api/v1/secrets';
  return {
    kind: 'Secret',
    apiVersion: 'v1',
    description: `secrets (${labelSelector}) in ${namespace ?? 'all namespaces'}`,
    watchPath: path,
    labelSelector,
    list: ({ limit, continue: cont }) => listPage(kc, path, { labelSelector, limit, continue: cont }),
  };
}
