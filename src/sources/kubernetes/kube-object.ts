// What the gateway keeps of an object read from the API server. A real cluster's objects carry much more than
// compile and the status writer read: metadata.managedFields (server-side apply bookkeeping, often larger than
// the spec) and annotations (kubectl apply's last-applied-configuration is a second copy of the whole object).
// With ten thousand tokens that is most of the cache, so each object is cut down as soon as it arrives.
/** An object as read from the API server (only the fields the gateway relies on are typed). */
export type KubeObject = {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string; generation?: number; [k: string]: unknown };
  [k: string]: unknown;
};

/**
 * A copy of `item` with only the fields compile and the status writer read — metadata name, namespace, uid (a
 * re-created object has a new one, while its generation starts again at 1), resourceVersion, generation,
 * creationTimestamp (managedFields, annotations, labels, … are dropped); a
 * Secret's type and data, or a custom resource's spec and status — plus apiVersion and kind (lists of core kinds omit them per item,
 * so the collection's are filled in, and when equal the collection's strings are kept: one copy, not one per object).
 * The result is never mutated afterwards; compile caches by its identity.
 */
export function slimObject(item: KubeObject, defaults?: { apiVersion: string; kind: string }): KubeObject {
  const m = item.metadata;
  // One literal: the fields in the object itself, not some there and the rest in a separate property array.
  const metadata = {
    name: m.name,
    namespace: m.namespace,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    generation: m.generation,
    creationTimestamp: m.creationTimestamp,
  };
  const apiVersion = item.apiVersion === undefined || item.apiVersion === defaults?.apiVersion ? defaults?.apiVersion : item.apiVersion;
  const kind = item.kind === undefined || item.kind === defaults?.kind ? defaults?.kind : item.kind;
  // Literals again, per shape: a Secret's type and data, or a custom resource's spec and status.
  const out: KubeObject =
    kind === 'Secret' ? { apiVersion, kind, metadata, type: item.type, data: item.data } : { apiVersion, kind, metadata, spec: item.spec, status: item.status };
  return out;
}
