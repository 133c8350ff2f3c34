// ConfigSource over the Kubernetes API: one reflector (list + watch) per kind and namespace (or one per kind
// for all namespaces), plus the labelled Secrets. The first snapshot is delivered only when every reflector has
// finished its initial list (that is what makes the pod ready); after that every significant change produces a
// snapshot within `debounceMs`. While the API server is unreachable the reflectors keep their caches and retry,
// so no snapshot is delivered and the last compiled table keeps serving; they share one ReconnectSignal, so when
// the server returns every kind retries as soon as one gets through.
import type { Logger } from '../../observability/logger.js';
import { KINDS, type Kind, type SourcedObject } from '../../compile/resources.js';
import { Backoff, type BackoffOptions } from './backoff.js';
import { Watch, type KubeConfig } from './kube-client.js';
import type { NamespaceScope } from './kube-config.js';
import { customResourceCollection, secretCollection } from './kube-collections.js';
import { ReconnectSignal, type ReconnectSignalOptions } from './reconnect-signal.js';
import { Reflector, type ReflectorStats } from './reflector.js';
import type { KubeObject } from './kube-object.js';
import type { ConfigSnapshot, ConfigSource } from '../source.js';

export const DEFAULT_SECRET_SELECTOR = 'modelgateway.io/secret=true';

export interface KubernetesSourceOptions {
  readonly kubeConfig: KubeConfig;
  /** Namespaces to watch, or 'all'. */
  readonly namespaces: NamespaceScope;
  /** Only Secrets with these labels are read (default modelgateway.io/secret=true). */
  readonly secretSelector?: string;
  readonly logger?: Logger;
  /** Changes arriving within this window (ms) are delivered as one snapshot. */
  readonly debounceMs?: number;
  readonly relistIntervalMs?: number;
  readonly pageSize?: number;
  readonly watchTimeoutSeconds?: readonly [number, number];
  /** Client-side inactivity timeout of a watch (ms); must exceed the server's bookmark interval (about 1 min). */
  readonly watchIdleTimeoutMs?: number;
  /** How long a list page may go unanswered (ms; default REQUEST_TIMEOUT_MS) before the reflector lists again. */
  readonly requestTimeoutMs?: number;
  readonly backoff?: BackoffOptions;
  /** The outage probe and wake-up timings (see reconnect-signal.ts). */
  readonly reconnect?: Omit<ReconnectSignalOptions, 'logger'>;
}

export class KubernetesSource implements ConfigSource {
  readonly #o: KubernetesSourceOptions;
  #reflectors: Reflector[] = [];
  #onSnapshot: ((s: ConfigSnapshot) => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #delivered = false;
  #stopped = false;
  #firstSync: { resolve: () => void; reject: (e: Error) => void } | undefined;
  #snapshots = 0;
  readonly #statusListeners = new Set<(object: KubeObject | undefined) => void>();

  constructor(options: KubernetesSourceOptions) {
    this.#o = options;
  }

  start(onSnapshot: (snapshot: ConfigSnapshot) => void): Promise<void> {
    if (this.#onSnapshot) throw new Error('KubernetesSource already started');
    this.#onSnapshot = onSnapshot;
    const { kubeConfig: kc, namespaces, logger } = this.#o;
    const watch = new Watch(kc);
    // The client aborts a watch that is silent for 30 s by default; with bookmarks a healthy watch is never silent
    // that long, so a longer idle limit avoids needless reconnects while still catching dead connections.
    (watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs = this.#o.watchIdleTimeoutMs ?? 120_000;
    const scopes: (string | undefined)[] = namespaces === 'all' ? [undefined] : [...namespaces];
    const selector = this.#o.secretSelector ?? DEFAULT_SECRET_SELECTOR;
    const timeout = this.#o.requestTimeoutMs;
    const collections = scopes.flatMap((ns) => [
      ...KINDS.map((kind) => customResourceCollection(kc, kind, ns, timeout)),
      secretCollection(kc, ns, selector, timeout),
    ]);
    const reconnect = new ReconnectSignal({ ...this.#o.reconnect, ...(logger ? { logger } : {}) });
    this.#reflectors = collections.map(
      (collection) =>
        new Reflector({
          collection,
          watch,
          logger,
          onChange: (significant, object) => (significant ? this.#schedule() : this.#statusChanged(object)),
          backoff: new Backoff(this.#o.backoff),
          reconnect,
          ...(this.#o.relistIntervalMs !== undefined ? { relistIntervalMs: this.#o.relistIntervalMs } : {}),
          ...(this.#o.pageSize !== undefined ? { pageSize: this.#o.pageSize } : {}),
          ...(this.#o.watchTimeoutSeconds !== undefined ? { watchTimeoutSeconds: this.#o.watchTimeoutSeconds } : {}),
        }),
    );
    const first = new Promise<void>((resolve, reject) => (this.#firstSync = { resolve, reject }));
    logger?.info({ namespaces: namespaces === 'all' ? '*' : namespaces, secretSelector: selector }, 'watching Kubernetes for configuration');
    for (const r of this.#reflectors) r.start();
    return first;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await Promise.all(this.#reflectors.map((r) => r.stop()));
    this.#firstSync?.reject(new Error('Kubernetes source stopped before its first complete sync'));
  }

  /** True once every reflector has completed its initial list. */
  get synced(): boolean {
    return this.#reflectors.length > 0 && this.#reflectors.every((r) => r.synced);
  }

  /** Number of snapshots delivered so far. */
  get snapshots(): number {
    return this.#snapshots;
  }

  /** The cached object as last seen (status included), for the status writer's "has anything changed?". */
  lookup(kind: Kind | 'Secret', namespace: string, name: string): KubeObject | undefined {
    for (const r of this.#reflectors) {
      if (r.collection.kind !== kind) continue;
      const o = r.get(namespace, name);
      if (o) return o;
    }
    return undefined;
  }

  /**
   * Called when only an object's status changed (the gateway's own writes, or anyone else's): `object` is that
   * object, or undefined when a relist may have changed several. Returns an unsubscribe function.
   */
  onStatusChange(listener: (object: KubeObject | undefined) => void): () => void {
    this.#statusListeners.add(listener);
    return () => this.#statusListeners.delete(listener);
  }

  /** Per-reflector counters, for tests and debugging. */
  stats(): { resource: string; stats: ReflectorStats }[] {
    return this.#reflectors.map((r) => ({ resource: r.collection.description, stats: { ...r.stats } }));
  }

  #schedule(): void {
    if (this.#stopped || this.#timer || !this.synced) return;
    // A fixed window from the first change (not reset by later ones) bounds the latency under a stream of changes.
    this.#timer = setTimeout(() => this.#deliver(), this.#delivered ? (this.#o.debounceMs ?? 50) : 0);
  }

  #statusChanged(object: KubeObject | undefined): void {
    if (this.#stopped || !this.#delivered) return;
    for (const l of this.#statusListeners) l(object);
  }

  #deliver(): void {
    this.#timer = undefined;
    if (this.#stopped || !this.#onSnapshot) return;
    const objects: SourcedObject[] = [];
    for (const r of this.#reflectors) for (const object of r.objects()) objects.push({ object });
    this.#snapshots++;
    try {
      this.#onSnapshot({ objects });
    } catch (err) {
      // The pipeline compiles and never throws by design; if it did, the watch loops must survive it.
      this.#o.logger?.error({ err: (err as Error).message }, 'config snapshot handler failed');
    }
    if (!this.#delivered) {
      this.#delivered = true;
      this.#firstSync?.resolve();
      this.#firstSync = undefined;
    }
  }
}
