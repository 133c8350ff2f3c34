// One list+watch loop for one resource in one scope (a namespace, or all), keeping a local cache, the way
// client-go's reflector does: paginated list → watch from its resourceVersion with bookmarks → on a closed watch
// resume from the last resourceVersion; on 410 Gone relist (the cache stays until the new list replaces it, so
// nothing is lost meanwhile); on errors back off with jitter; relist periodically, bounded by pagination.
// The reflectors of one source share a ReconnectSignal, so that after an API-server outage they all retry as soon
// as one of them gets through, not each when its own backoff runs out.
import type { Logger } from '../../observability/logger.js';
import { Backoff } from './backoff.js';
import { slimObject, type KubeObject } from './kube-object.js';
import { isOutageError, ReconnectSignal } from './reconnect-signal.js';

export interface ListPage {
  readonly items: KubeObject[];
  readonly resourceVersion: string;
  readonly continue: string | undefined;
}

/** What a reflector needs to know about its resource; built from the real client in kube-collections.ts. */
export interface ResourceCollection {
  readonly kind: string;
  readonly apiVersion: string;
  /** For logs, e.g. "modelroutes in team-a". */
  readonly description: string;
  /** URL path of the collection, as the client's Watch wants it. */
  readonly watchPath: string;
  readonly labelSelector?: string;
  list(page: { limit: number; continue?: string }): Promise<ListPage>;
}

/** The part of @kubernetes/client-node's Watch a reflector uses. */
interface WatchClient {
  watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    // biome-ignore lint/suspicious/noExplicitAny: the client's own signature; events are untyped JSON, checked in #onEvent.
    callback: (phase: string, obj: any) => void,
    // biome-ignore lint/suspicious/noExplicitAny: the client's own signature (any error value).
    done: (err: any) => void,
  ): Promise<AbortController>;
}

export interface ReflectorOptions {
  readonly collection: ResourceCollection;
  readonly watch: WatchClient;
  /**
   * Called after the cache changed; `significant` is false for changes compile does not read (status only), and
   * `object` is the one object a watch event changed (undefined after a relist).
   */
  readonly onChange: (significant: boolean, object?: KubeObject) => void;
  readonly logger?: Logger;
  readonly pageSize?: number;
  /** Periodic relist (ms); each reflector jitters it by up to +50% so replicas and resources spread out. */
  readonly relistIntervalMs?: number;
  /** Server-side watch timeout range (s); a random value in it per watch, as client-go does. */
  readonly watchTimeoutSeconds?: readonly [number, number];
  readonly backoff?: Backoff;
  /** Shared by the reflectors of one source (a private one otherwise). */
  readonly reconnect?: ReconnectSignal;
  readonly random?: () => number;
}

type Outcome = 'closed' | 'expired' | 'relist' | 'stopped';

export interface ReflectorStats {
  lists: number;
  watches: number;
  expired: number;
  errors: number;
  /** BOOKMARK events read: each moves the resourceVersion the next watch resumes from. */
  bookmarks: number;
}

export class Reflector {
  readonly stats: ReflectorStats = { lists: 0, watches: 0, expired: 0, errors: 0, bookmarks: 0 };
  #cache = new Map<string, KubeObject>();
  #rv: string | undefined;
  #synced = false;
  #stop = new AbortController();
  #current: { abort(): void } | undefined;
  #loop: Promise<void> | undefined;
  #nextRelistAt = 0;
  /** Whether the last failure was an outage error (no answer, or a 5xx). */
  #outageFailures = false;
  readonly #o: Required<Omit<ReflectorOptions, 'logger'>> & { logger: Logger | undefined };

  constructor(options: ReflectorOptions) {
    this.#o = {
      pageSize: 500,
      relistIntervalMs: 10 * 60_000,
      watchTimeoutSeconds: [300, 600],
      backoff: new Backoff(),
      reconnect: new ReconnectSignal(),
      random: Math.random,
      ...options,
      logger: options.logger,
    };
  }

  get synced(): boolean {
    return this.#synced;
  }

  get collection(): ResourceCollection {
    return this.#o.collection;
  }

  /** The cached objects, each with apiVersion and kind set. */
  objects(): KubeObject[] {
    return [...this.#cache.values()];
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.#cache.get(key(namespace, name));
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    this.#current?.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { backoff, logger, collection } = this.#o;
    while (!this.#stop.signal.aborted) {
      try {
        if (this.#rv === undefined || Date.now() >= this.#nextRelistAt) await this.#relist();
        const started = Date.now();
        const { outcome, events } = await this.#watchOnce();
        if (outcome === 'stopped') break;
        if (outcome === 'expired') {
          this.stats.expired++;
          logger?.info({ resource: collection.description }, 'watch expired (410 Gone); relisting');
          this.#rv = undefined;
          continue;
        }
        if (outcome === 'relist') continue;
        // A watch the server ends at once without delivering anything is a failure in disguise: back off (on its
        // own: the server did answer, so this is no outage to probe for).
        if (events === 0 && Date.now() - started < 1000) await this.#pause(backoff.next(), false);
        else backoff.reset();
      } catch (err) {
        if (this.#stop.signal.aborted) break;
        this.stats.errors++;
        const outage = isOutageError(err);
        // An answer after outage errors starts from the first delay: a restarted API server answers 403 (its RBAC
        // authorizer not yet synced) or 404 (CRDs not yet served) for a moment, and inheriting the delay the outage
        // grew to (up to 30 s, not woken by the server's return) kept one kind stale for that long.
        if (!outage && this.#outageFailures) backoff.reset();
        this.#outageFailures = outage;
        const delay = backoff.next();
        if (isGone(err)) this.#rv = undefined;
        // Before its first list there is no snapshot to keep: the gateway stays not ready until every list succeeds.
        logger?.warn(
          {
            resource: collection.description,
            err: describe(err),
            retryInMs: delay,
            ...(codeOf(err) === 403 ? { hint: `forbidden: the gateway's RBAC does not allow list and watch of ${collection.description}` } : {}),
          },
          this.#synced
            ? 'kubernetes list/watch failed; keeping the last snapshot and retrying'
            : 'kubernetes list failed; not ready until every initial list succeeds; retrying',
        );
        await this.#pause(delay, outage);
      }
    }
  }

  /** Waits before the next attempt; ends early when this reflector is to probe or the server answers again. */
  async #pause(ms: number, outage: boolean): Promise<void> {
    const reason = await this.#o.reconnect.wait(ms, outage, this.#stop.signal);
    // The failures so far were the outage's: once the server answers, a new failure starts from the first delay.
    if (reason === 'back') this.#o.backoff.reset();
  }

  async #relist(): Promise<void> {
    const { collection, pageSize, relistIntervalMs, random } = this.#o;
    this.stats.lists++;
    const fresh = new Map<string, KubeObject>();
    let cont: string | undefined;
    let rv = '';
    // Not a do/while: `continue` there would test the (cleared) token and end the list after an expired one.
    for (;;) {
      let page: ListPage;
      try {
        page = await collection.list({ limit: pageSize, ...(cont ? { continue: cont } : {}) });
      } catch (err) {
        // An expired continue token: start the list over rather than failing the whole relist.
        if (cont && isGone(err)) {
          fresh.clear();
          cont = undefined;
          continue;
        }
        throw err;
      }
      for (const item of page.items) {
        const o = this.#normalise(item);
        fresh.set(key(o.metadata.namespace, o.metadata.name), o);
      }
      rv = page.resourceVersion;
      cont = page.continue || undefined;
      if (!cont) break;
    }
    const significant = !this.#synced || diff(this.#cache, fresh);
    const anyChange = significant || [...fresh].some(([k, o]) => this.#cache.get(k)?.metadata.resourceVersion !== o.metadata.resourceVersion);
    this.#cache = fresh;
    this.#rv = rv;
    this.#synced = true;
    this.#nextRelistAt = Date.now() + relistIntervalMs * (1 + 0.5 * random());
    this.#o.backoff.reset();
    this.#o.reconnect.listed();
    if (anyChange && !this.#stop.signal.aborted) this.#o.onChange(significant);
  }

  #watchOnce(): Promise<{ outcome: Outcome; events: number }> {
    const {
      collection,
      watch,
      reconnect,
      watchTimeoutSeconds: [lo, hi],
      random,
    } = this.#o;
    // stop() may have come while the list was in flight (lists cannot be aborted): do not open a watch then.
    if (this.#stop.signal.aborted) return Promise.resolve({ outcome: 'stopped', events: 0 });
    this.stats.watches++;
    return new Promise((resolve, reject) => {
      let outcome: Outcome | undefined;
      let events = 0;
      let clientController: AbortController | undefined;
      let finished = false;
      let open = false;
      const end = (o: Outcome) => {
        outcome ??= o;
        clientController?.abort();
      };
      this.#current = { abort: () => end(this.#stop.signal.aborted ? 'stopped' : 'relist') };
      const relistTimer = setTimeout(() => end('relist'), Math.max(0, this.#nextRelistAt - Date.now()));
      const onStop = () => end('stopped');
      this.#stop.signal.addEventListener('abort', onStop, { once: true });
      const finish = (err: unknown) => {
        finished = true;
        if (open) reconnect.watchClosed();
        open = false;
        clearTimeout(relistTimer);
        this.#stop.signal.removeEventListener('abort', onStop);
        this.#current = undefined;
        if (outcome) return resolve({ outcome, events });
        if (err && isGone(err)) return resolve({ outcome: 'expired', events });
        // The client's own inactivity timeout: the connection went quiet, resume from the last resourceVersion.
        if (err && (err as Error).name === 'TimeoutError') return resolve({ outcome: 'closed', events });
        if (err) return reject(err);
        resolve({ outcome: 'closed', events });
      };
      const query = {
        resourceVersion: this.#rv,
        allowWatchBookmarks: true,
        timeoutSeconds: Math.round(lo + (hi - lo) * random()),
        ...(collection.labelSelector ? { labelSelector: collection.labelSelector } : {}),
      };
      // biome-ignore lint/suspicious/noExplicitAny: untyped watch event JSON, checked field by field in #onEvent.
      const onEvent = (phase: string, obj: any) => {
        if (outcome) return;
        events++;
        this.#onEvent(phase, obj, end);
      };
      watch.watch(collection.watchPath, query, onEvent, finish).then((c) => {
        clientController = c;
        if (outcome) return void c.abort();
        // Resolved without finish: the server answered 200 and the stream is open.
        if (!finished) {
          open = true;
          reconnect.watchOpened();
        }
      }, finish);
    });
  }

  // biome-ignore lint/suspicious/noExplicitAny: untyped watch event JSON from the API server, checked field by field here.
  #onEvent(phase: string, obj: any, end: (o: Outcome) => void): void {
    if (phase === 'ERROR') {
      // A Status object: 410 means our resourceVersion was compacted away.
      end(obj?.code === 410 ? 'expired' : 'closed');
      if (obj?.code !== 410) this.#o.logger?.warn({ resource: this.#o.collection.description, code: obj?.code, reason: obj?.reason }, 'watch error event');
      return;
    }
    const rv: string | undefined = obj?.metadata?.resourceVersion;
    if (phase === 'BOOKMARK') {
      if (rv) this.#rv = rv;
      this.stats.bookmarks++;
      return;
    }
    if (!obj?.metadata?.name) return;
    const o = this.#normalise(obj);
    const k = key(o.metadata.namespace, o.metadata.name);
    const prev = this.#cache.get(k);
    if (phase === 'DELETED') {
      if (prev) {
        this.#cache.delete(k);
        this.#o.onChange(true);
      }
    } else if (phase === 'ADDED' || phase === 'MODIFIED') {
      if (prev?.metadata.resourceVersion !== o.metadata.resourceVersion || !prev) {
        this.#cache.set(k, o);
        this.#o.onChange(!prev || significantChange(prev, o), o);
      }
    }
    if (rv) this.#rv = rv;
  }

  /** Only the fields the gateway reads (see kube-object.ts), with apiVersion/kind (lists of core kinds omit them). */
  #normalise(item: KubeObject): KubeObject {
    return slimObject(item, this.#o.collection);
  }
}

function key(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

/**
 * Whether compile could see a difference: objects with a generation (the custom resources) change their spec
 * only with a new generation, so a status-only update (our own status writes) is not significant. An object
 * deleted and created again while a relist was due (after 410) starts again at generation 1: its uid tells.
 */
function significantChange(prev: KubeObject, next: KubeObject): boolean {
  if (prev.metadata.uid !== next.metadata.uid) return true;
  const g1 = prev.metadata.generation;
  const g2 = next.metadata.generation;
  if (typeof g1 === 'number' && typeof g2 === 'number') return g1 !== g2;
  return prev.metadata.resourceVersion !== next.metadata.resourceVersion;
}

function diff(old: Map<string, KubeObject>, fresh: Map<string, KubeObject>): boolean {
  if (old.size !== fresh.size) return true;
  for (const [k, o] of fresh) {
    const prev = old.get(k);
    if (!prev || significantChange(prev, o)) return true;
  }
  return false;
}

/** The HTTP status of a failed list or watch, if it had one. */
function codeOf(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown } | undefined;
  const code = e?.code ?? e?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

function isGone(err: unknown): boolean {
  return codeOf(err) === 410;
}

/** An error for logs: never the response body (it could echo an object). */
function describe(err: unknown): string {
  const e = err as { message?: unknown; cause?: { code?: unknown } };
  const code = codeOf(err);
  const msg = typeof e?.message === 'string' ? e.message.split('\n')[0]!.slice(0, 200) : String(err);
  // The list's own errors already end in "HTTP 403": the status is not said twice.
  const status = code !== undefined && !msg.includes(`HTTP ${code}`) ? `HTTP ${code}` : undefined;
  return [status, msg, e?.cause?.code].filter(Boolean).join(': ');
}
