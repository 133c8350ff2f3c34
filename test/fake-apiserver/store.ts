// The fake API server's storage: objects per resource type with one global, increasing resourceVersion (as
// etcd's revision), an event history for watches that can be compacted (→ 410 Gone), generation bumps on spec
// changes only, and the status subresource kept apart from the main resource.
import { randomUUID } from 'node:crypto';
import { applyDefaults, crdSchemas, type StructuralSchema } from './defaulting.js';
import { parseLabelSelector, type LabelMatcher } from './label-selector.js';
import { applyMergePatch } from './merge-patch.js';

export interface ResourceType {
  readonly group: string; // '' for the core group
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  /** Has a status subresource: the main resource ignores status, /status changes only status. */
  readonly statusSubresource: boolean;
  /** Tracks metadata.generation (bumped when anything but metadata and status changes). */
  readonly generation: boolean;
  /** Whether list items carry apiVersion/kind (custom resources do; typed core lists do not). */
  readonly listItemsCarryKind: boolean;
}

export type KubeObj = {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string>; [k: string]: unknown };
  [k: string]: unknown;
};

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';
export interface StoredEvent {
  readonly type: EventType;
  readonly rv: number;
  readonly object: KubeObj;
  readonly previous: KubeObj | undefined;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export interface WatchFilter {
  namespace: string | undefined;
  selector: LabelMatcher;
}

export interface Watcher extends WatchFilter {
  readonly rt: ResourceType;
  send(type: EventType, object: KubeObj): void;
}

const clone = <T>(o: T): T => structuredClone(o);
export const apiVersionOf = (rt: ResourceType) => (rt.group ? `${rt.group}/${rt.version}` : rt.version);
const rtKey = (rt: ResourceType) => `${rt.group}/${rt.plural}`;
const objKey = (ns: string | undefined, name: string) => `${ns ?? ''}/${name}`;
/** The repository's CRD schemas, read once: custom resources are defaulted from them on every write. */
let schemas: Record<string, StructuralSchema> | undefined;

export class Store {
  #rv = 1000;
  #compactedRV = 0;
  readonly #objects = new Map<string, Map<string, KubeObj>>();
  readonly #events = new Map<string, StoredEvent[]>();
  readonly watchers = new Set<Watcher>();

  get resourceVersion(): number {
    return this.#rv;
  }

  get compactedRV(): number {
    return this.#compactedRV;
  }

  /** Forgets the event history up to now: watches from an older resourceVersion get 410 Gone, as after etcd compaction. */
  compact(): void {
    this.#compactedRV = this.#rv;
    for (const list of this.#events.values()) list.length = 0;
  }

  get(rt: ResourceType, namespace: string | undefined, name: string): KubeObj {
    const o = this.#bucket(rt).get(objKey(namespace, name));
    if (!o) throw new ApiError(404, 'NotFound', `${rt.plural}${rt.group ? `.${rt.group}` : ''} "${name}" not found`);
    return clone(o);
  }

  tryGet(rt: ResourceType, namespace: string | undefined, name: string): KubeObj | undefined {
    const o = this.#bucket(rt).get(objKey(namespace, name));
    return o && clone(o);
  }

  list(rt: ResourceType, namespace: string | undefined, selector: string | undefined): KubeObj[] {
    const match = parseLabelSelector(selector);
    return [...this.#bucket(rt).values()]
      .filter((o) => (namespace === undefined || o.metadata.namespace === namespace) && match(o.metadata.labels))
      .sort((a, b) => objKey(a.metadata.namespace, a.metadata.name).localeCompare(objKey(b.metadata.namespace, b.metadata.name)))
      .map(clone);
  }

  create(rt: ResourceType, input: KubeObj): KubeObj {
    input = foldStringData(rt, input);
    const { namespace, name } = input.metadata;
    if (!name) throw new ApiError(422, 'Invalid', 'metadata.name: Required value');
    if (this.#bucket(rt).has(objKey(namespace, name))) {
      throw new ApiError(409, 'AlreadyExists', `${rt.plural} "${name}" already exists`);
    }
    const obj = clone(input);
    obj.apiVersion = apiVersionOf(rt);
    obj.kind = rt.kind;
    obj.metadata = {
      ...obj.metadata,
      uid: randomUUID(),
      creationTimestamp: new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
      ...(rt.generation ? { generation: 1 } : {}),
    };
    if (rt.statusSubresource) delete obj.status;
    return this.#write(rt, 'ADDED', obj, undefined);
  }

  /** PUT semantics; with `requireResourceVersion` a missing or stale metadata.resourceVersion is refused (409). */
  update(rt: ResourceType, input: KubeObj, opts: { requireResourceVersion?: boolean; subresource?: 'status' } = {}): KubeObj {
    const { namespace, name } = input.metadata;
    const current = this.get(rt, namespace, name);
    const rv = input.metadata.resourceVersion;
    if (opts.requireResourceVersion && !rv) throw new ApiError(422, 'Invalid', 'metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
    if (rv && rv !== current.metadata.resourceVersion) {
      throw new ApiError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${rt.plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    return this.#replace(rt, current, clone(input), opts.subresource);
  }

  /** application/merge-patch+json on the object or its status subresource. */
  mergePatch(rt: ResourceType, namespace: string | undefined, name: string, patch: unknown, subresource?: 'status'): KubeObj {
    const current = this.get(rt, namespace, name);
    const p = patch as { metadata?: { resourceVersion?: string } } | null;
    const rv = p?.metadata?.resourceVersion;
    if (rv && rv !== current.metadata.resourceVersion) {
      throw new ApiError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${rt.plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    const next = applyMergePatch(clone(current), patch) as KubeObj;
    return this.#replace(rt, current, next, subresource);
  }

  delete(rt: ResourceType, namespace: string | undefined, name: string): KubeObj {
    const current = this.get(rt, namespace, name);
    this.#bucket(rt).delete(objKey(namespace, name));
    const rv = ++this.#rv;
    const gone = { ...current, metadata: { ...current.metadata, resourceVersion: String(rv) } };
    this.#record(rt, { type: 'DELETED', rv, object: gone, previous: current });
    return clone(gone);
  }

  /** Events after `fromRV` for a watch (throws 410 when the history no longer reaches back that far). */
  eventsSince(rt: ResourceType, fromRV: number): StoredEvent[] {
    if (fromRV < this.#compactedRV) {
      throw new ApiError(410, 'Expired', `too old resource version: ${fromRV} (${this.#compactedRV})`);
    }
    return (this.#events.get(rtKey(rt)) ?? []).filter((e) => e.rv > fromRV);
  }

  #replace(rt: ResourceType, current: KubeObj, next: KubeObj, subresource: 'status' | undefined): KubeObj {
    next = foldStringData(rt, next);
    // Identity and server-owned metadata always come from the stored object.
    const keep = ['uid', 'creationTimestamp', 'generation', 'namespace', 'name'] as const;
    const meta: Record<string, unknown> = { ...next.metadata };
    for (const k of keep) {
      if (current.metadata[k] === undefined) delete meta[k];
      else meta[k] = current.metadata[k];
    }
    next.metadata = meta as KubeObj['metadata'];
    next.apiVersion = apiVersionOf(rt);
    next.kind = rt.kind;
    if (rt.statusSubresource) {
      if (subresource === 'status') {
        // Only status may change through /status.
        const status = next.status;
        Object.assign(next, clone(current), { status });
        if (status === undefined) delete next.status;
        next.metadata = { ...current.metadata };
      } else if (current.status === undefined) delete next.status;
      else next.status = current.status;
    }
    if (rt.generation && subresource !== 'status' && specOf(current) !== specOf(next)) {
      next.metadata.generation = Number(current.metadata.generation ?? 0) + 1;
    }
    return this.#write(rt, 'MODIFIED', next, current);
  }

  #write(rt: ResourceType, type: EventType, obj: KubeObj, previous: KubeObj | undefined): KubeObj {
    const schema = rt.group ? (schemas ??= crdSchemas())[rt.kind] : undefined;
    if (schema) applyDefaults(obj, schema);
    const rv = ++this.#rv;
    obj.metadata.resourceVersion = String(rv);
    this.#bucket(rt).set(objKey(obj.metadata.namespace, obj.metadata.name), obj);
    this.#record(rt, { type, rv, object: clone(obj), previous });
    return clone(obj);
  }

  #record(rt: ResourceType, event: StoredEvent): void {
    let list = this.#events.get(rtKey(rt));
    if (!list) this.#events.set(rtKey(rt), (list = []));
    list.push(event);
    for (const w of this.watchers) {
      if (w.rt !== rt) continue;
      const typed = translate(event, w);
      if (typed) w.send(typed, clone(event.object));
    }
  }

  #bucket(rt: ResourceType): Map<string, KubeObj> {
    let b = this.#objects.get(rtKey(rt));
    if (!b) this.#objects.set(rtKey(rt), (b = new Map()));
    return b;
  }
}

/** Secrets: stringData is write-only; the API server merges it into data (base64) and never returns it. */
function foldStringData(rt: ResourceType, obj: KubeObj): KubeObj {
  if (rt.kind !== 'Secret' || obj.stringData === undefined) return obj;
  const { stringData, ...rest } = obj;
  const data: Record<string, string> = { ...((rest.data as Record<string, string>) ?? {}) };
  for (const [k, v] of Object.entries(stringData as Record<string, string>)) data[k] = Buffer.from(v, 'utf8').toString('base64');
  return { ...rest, data } as KubeObj;
}

/** Everything except metadata and status: what bumps metadata.generation. */
function specOf(o: KubeObj): string {
  const { metadata: _m, status: _s, resourceVersion: _r, ...rest } = o as KubeObj & { resourceVersion?: unknown };
  return JSON.stringify(rest);
}

/**
 * What a filtered watch sees of an event: an object that starts matching the selector arrives as ADDED, one that
 * stops matching as DELETED, as the API server does for label-selected watches.
 */
export function translate(event: StoredEvent, filter: WatchFilter): EventType | undefined {
  const inScope = (o: KubeObj | undefined) =>
    o !== undefined && (filter.namespace === undefined || o.metadata.namespace === filter.namespace) && filter.selector(o.metadata.labels);
  const now = event.type !== 'DELETED' && inScope(event.object);
  const before = event.type === 'ADDED' ? false : inScope(event.previous);
  if (event.type === 'DELETED') return before ? 'DELETED' : undefined;
  if (now && before) return 'MODIFIED';
  if (now) return 'ADDED';
  if (before) return 'DELETED';
  return undefined;
}
