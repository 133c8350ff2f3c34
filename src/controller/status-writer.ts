// Writes compile's per-object conditions to status.conditions through the status subresource, like an operator:
// only the leader writes; only objects whose status would change are queued; the queue holds each object once
// (the latest desired status wins) and drains through a token bucket, so thousands of changes become a steady
// trickle of PATCHes instead of a storm. Each PATCH carries the resourceVersion it was computed from; on 409 the
// object is re-read and the status recomputed.
import { kubeRequest, type KubeConfig } from '../sources/kubernetes/kube-client.js';
import type { Logger } from '../observability/logger.js';
import type { ObjectStatus } from '../compile/conditions.js';
import { RESOURCE_NAMES } from '../compile/resource-names.js';
import { API_GROUP, API_VERSION, type Kind, objectRef } from '../compile/resources.js';
import { Backoff } from '../sources/kubernetes/backoff.js';
import type { KubeObject } from '../sources/kubernetes/kube-object.js';
import { desiredStatus, statusDiffers, statusPatch } from './status-diff.js';
import { TokenBucket } from './token-bucket.js';

/** The two API calls the writer makes; `code` on a rejection is the HTTP status. */
export interface StatusApi {
  patchStatus(kind: Kind, namespace: string, name: string, patch: Record<string, unknown>): Promise<unknown>;
  get(kind: Kind, namespace: string, name: string): Promise<KubeObject>;
}

export function kubernetesStatusApi(kc: KubeConfig): StatusApi {
  const path = (kind: Kind, namespace: string, name: string) =>
    `/apis/${API_GROUP}/${API_VERSION}/namespaces/${namespace}/${RESOURCE_NAMES[kind].plural}/${name}`;
  return {
    // A JSON merge patch of the status subresource (the body carries metadata.resourceVersion as a guard).
    patchStatus: (kind, namespace, name, body) =>
      kubeRequest(kc, `${path(kind, namespace, name)}/status`, { method: 'PATCH', body, contentType: 'application/merge-patch+json' }),
    get: (kind, namespace, name) => kubeRequest<KubeObject>(kc, path(kind, namespace, name)),
  };
}

export interface StatusWriterOptions {
  readonly api: StatusApi;
  /** The object as the informer cache last saw it (status included). */
  readonly lookup: (kind: Kind, namespace: string, name: string) => KubeObject | undefined;
  readonly isLeader: () => boolean;
  /** Average status writes per second (default 10) and burst (default 20). */
  readonly qps?: number;
  readonly burst?: number;
  readonly maxConflictRetries?: number;
  readonly logger?: Logger;
  readonly now?: () => Date;
  /** Told about every write attempt's outcome (metrics). */
  readonly onResult?: (result: 'written' | 'conflict' | 'error') => void;
}

export interface StatusWriterStats {
  writes: number;
  conflicts: number;
  errors: number;
}

const KIND_SET = new Set<string>(Object.keys(RESOURCE_NAMES));

export class StatusWriter {
  readonly stats: StatusWriterStats = { writes: 0, conflicts: 0, errors: 0 };
  readonly #o: StatusWriterOptions;
  readonly #bucket: TokenBucket;
  readonly #backoff = new Backoff({ initialMs: 1000, maxMs: 60_000 });
  #desired = new Map<string, ObjectStatus>();
  /**
   * (desired status, cached object) pairs already found equal. compile hands back the same ObjectStatus for an
   * unchanged object and the informer cache the same object until it changes, so after a one-object change only
   * that object is compared again, not ten thousand. (Equality does not depend on the clock: a condition whose
   * status did not flip keeps its stored lastTransitionTime.)
   */
  #equal = new WeakMap<ObjectStatus, KubeObject>();
  readonly #queue = new Set<string>();
  #draining: Promise<void> | undefined;
  readonly #stop = new AbortController();
  readonly #retryTimers = new Set<NodeJS.Timeout>();
  #idleWaiters: (() => void)[] = [];

  constructor(options: StatusWriterOptions) {
    this.#o = options;
    this.#bucket = new TokenBucket(options.qps ?? 10, options.burst ?? 20);
  }

  /** Hands over the statuses of the latest compile; objects that no longer exist are forgotten. */
  update(statuses: readonly ObjectStatus[]): void {
    const next = new Map<string, ObjectStatus>();
    // Only the three kinds have a status subresource (a file-source object without a namespace never gets here).
    for (const s of statuses) if (KIND_SET.has(s.kind)) next.set(s.ref, s);
    this.#desired = next;
    for (const k of [...this.#queue]) if (!next.has(k)) this.#queue.delete(k);
    this.resync();
  }

  /** Queues every object whose stored status differs from the desired one (e.g. on becoming leader). */
  resync(): void {
    if (this.#stop.signal.aborted) return;
    const now = this.#now();
    for (const [key, s] of this.#desired) this.#check(key, s, now);
    this.#kick();
  }

  /**
   * Queues one object if its stored status differs from the desired one: its status changed without a new
   * compile (edited by hand, or written by another replica or an older version), and the gateway owns it.
   */
  recheck(kind: string, namespace: string, name: string): void {
    if (this.#stop.signal.aborted) return;
    const key = objectRef(kind, namespace, name);
    const s = this.#desired.get(key);
    if (!s) return;
    this.#check(key, s, this.#now());
    this.#kick();
  }

  #check(key: string, s: ObjectStatus, now: Date): void {
    // A queued object is compared again when its turn comes (#write), against the then latest status.
    if (this.#queue.has(key)) return;
    const current = this.#o.lookup(s.kind as Kind, s.namespace, s.name);
    if (!current || this.#equal.get(s) === current) return;
    if (statusDiffers(current.status, desiredStatus(s, current.status, now))) this.#queue.add(key);
    else this.#equal.set(s, current);
  }

  /** Number of objects waiting to be written. */
  get pending(): number {
    return this.#queue.size;
  }

  /** Resolves when nothing is queued or being written (tests, benchmarks). */
  idle(): Promise<void> {
    if (!this.#draining && (this.#queue.size === 0 || !this.#o.isLeader())) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    for (const t of this.#retryTimers) clearTimeout(t);
    await this.#draining;
  }

  #kick(): void {
    if (this.#draining || this.#stop.signal.aborted || !this.#o.isLeader() || this.#queue.size === 0) return this.#notifyIdle();
    this.#draining = this.#drain().finally(() => {
      this.#draining = undefined;
      this.#kick();
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.size > 0 && this.#o.isLeader() && !this.#stop.signal.aborted) {
      if (!(await this.#bucket.take(this.#stop.signal))) return;
      const key = this.#queue.values().next().value as string;
      this.#queue.delete(key);
      await this.#write(key);
    }
  }

  async #write(key: string): Promise<void> {
    const s = this.#desired.get(key);
    if (!s || !this.#o.isLeader()) return;
    const kind = s.kind as Kind;
    let current = this.#o.lookup(kind, s.namespace, s.name);
    for (let attempt = 0; current && attempt <= (this.#o.maxConflictRetries ?? 3); attempt++) {
      // Conditions computed from an older spec than the one now stored would be wrong; the next compile will come.
      if (s.generation !== undefined && current.metadata.generation !== undefined && current.metadata.generation !== s.generation) return;
      const want = desiredStatus(s, current.status, this.#now());
      if (!statusDiffers(current.status, want)) return;
      try {
        await this.#o.api.patchStatus(kind, s.namespace, s.name, statusPatch(want, current.metadata.resourceVersion));
        this.stats.writes++;
        this.#o.onResult?.('written');
        this.#backoff.reset();
        return;
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (code === 404) return; // deleted meanwhile
        if (code === 409) {
          this.stats.conflicts++;
          this.#o.onResult?.('conflict');
          try {
            current = await this.#o.api.get(kind, s.namespace, s.name);
          } catch (e) {
            if ((e as { code?: unknown }).code === 404) return;
            return this.#retryLater(key, e);
          }
          continue;
        }
        return this.#retryLater(key, err);
      }
    }
  }

  #retryLater(key: string, err: unknown): void {
    this.stats.errors++;
    this.#o.onResult?.('error');
    const delay = this.#backoff.next();
    const e = err as { code?: unknown; message?: unknown };
    this.#o.logger?.warn(
      { object: key, code: e.code, err: typeof e.message === 'string' ? e.message.split('\n')[0]!.slice(0, 200) : undefined, retryInMs: delay },
      'status write failed; will retry',
    );
    const t = setTimeout(() => {
      this.#retryTimers.delete(t);
      this.#queue.add(key);
      this.#kick();
    }, delay);
    this.#retryTimers.add(t);
  }

  #notifyIdle(): void {
    if (this.#draining) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }

  #now(): Date {
    return this.#o.now?.() ?? new Date();
  }
}
