// What the gateway keeps of an object read from the API server. A real cluster's objects carry much more than
// compile and the status writer read: metadata.managedFields (server-side apply bookkeeping, often larger than
// the spec) and annotations (kubectl apply's last-applied-configuration is a second copy of the whole object).
// With ten thousand tokens that is most of the cache, so each object is cut down as soon as it arrives.
import type { KubeObject } from './reflector.js';

/** metadata fields compile and the status writer read; everything else (managedFields, annotations, …) is dropped. */
const METADATA = ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'labels'] as const;
/** Top-level fields: the three kinds' spec and status, a Secret's type and data. */
const TOP = ['spec', 'status', 'type', 'data'] as const;

/**
 * A copy of `item` with only the fields above, plus apiVersion and kind (lists of core kinds omit them per item,
 * so the endpoint's are filled in). The result is never mutated afterwards; compile caches by its identity.
 */
export function slimObject(item: KubeObject, defaults?: { apiVersion: string; kind: string }): KubeObject {
  const m = item.metadata as Record<string, unknown>;
  const metadata: Record<string, unknown> = {};
  for (const k of METADATA) if (m[k] !== undefined) metadata[k] = m[k];
  const out: KubeObject = {
    apiVersion: item.apiVersion ?? defaults?.apiVersion,
    kind: item.kind ?? defaults?.kind,
    metadata: metadata as KubeObject['metadata'],
  };
  for (const k of TOP) if (item[k] !== undefined) out[k] = item[k];
  return out;
}
