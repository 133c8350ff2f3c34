// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it: the holder renews
// spec.renewTime every retry period; others take over once they have seen no renewal for leaseDuration (measured
// on their own clock from when they last saw the record change, so clock skew between nodes does not matter).
// Every write carries the resourceVersion it read, so two candidates can never both win (the loser gets 409).
// Only the leader writes status; serving traffic never depends on being leader.
import type { Logger } from '../observability/logger.js';
import { kubeRequest, type KubeConfig } from '../sources/kubernetes/kube-client.js';

/** The fields of a coordination.k8s.io/v1 Lease the election reads and writes (times are MicroTime strings). */
interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; [k: string]: unknown };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
    [k: string]: unknown;
  };
}

/**
 * get / create / replace of one Lease; a rejection's `code` is the HTTP status (404, 409). Each request gives up
 * after `timeoutMs`: an answer later than the renew deadline is of no use, and a silent connection must not hold
 * the election's round (and stop()) for as long as the HTTP client would wait.
 */
function leaseApi(kc: KubeConfig, namespace: string, name: string, timeoutMs: number) {
  const collection = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;
  return {
    read: () => kubeRequest<Lease>(kc, `${collection}/${name}`, { timeoutMs }),
    create: (body: Lease) => kubeRequest<Lease>(kc, collection, { method: 'POST', body, timeoutMs }),
    replace: (body: Lease) => kubeRequest<Lease>(kc, `${collection}/${name}`, { method: 'PUT', body, timeoutMs }),
  };
}

export interface LeaderElectionOptions {
  readonly kubeConfig: KubeConfig;
  /** Namespace of the Lease (the gateway's own). */
  readonly namespace: string;
  /** Lease name (--lease-name, default model-gateway). */
  readonly name: string;
  /** This replica's identity (POD_NAME). */
  readonly identity: string;
  readonly leaseDurationMs?: number;
  /** A leader that could not renew for this long steps down (before anyone else may take over). */
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  readonly logger?: Logger;
  readonly random?: () => number;
}

export class LeaderElector {
  readonly #api: ReturnType<typeof leaseApi>;
  readonly #o: Required<Omit<LeaderElectionOptions, 'logger' | 'kubeConfig'>> & { logger: Logger | undefined };
  #leading = false;
  #lastRenew = 0;
  #observedRV: string | undefined;
  #observedAt = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Steps down at the renew deadline unless a renewal came first. */
  #deadline: NodeJS.Timeout | undefined;
  #stopped = false;
  #tick: Promise<void> | undefined;
  readonly #listeners = new Set<(leading: boolean) => void>();

  constructor(options: LeaderElectionOptions) {
    this.#o = {
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      random: Math.random,
      ...options,
      logger: options.logger,
    };
    if (this.#o.renewDeadlineMs >= this.#o.leaseDurationMs) throw new Error('renewDeadline must be shorter than leaseDuration');
    this.#api = leaseApi(options.kubeConfig, options.namespace, options.name, this.#o.renewDeadlineMs);
  }

  /**
   * The clock decides too: past the renew deadline of the last renewal this replica is no leader, even before a
   * round or a timer says so (the process or its event loop was paused), since a standby may hold the Lease soon.
   */
  isLeader(): boolean {
    return this.#leading && Date.now() - this.#lastRenew <= this.#o.renewDeadlineMs;
  }

  /** Called with true on becoming leader and false on losing it. Returns an unsubscribe function. */
  onChange(listener: (leading: boolean) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  start(): void {
    this.#stopped = false;
    this.#schedule(0);
  }

  /** Stops campaigning; a leader releases the Lease so another replica takes over at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#deadline);
    await this.#tick;
    if (this.#leading) {
      await this.#release().catch((err) => this.#o.logger?.warn({ err: describe(err) }, 'could not release the leader lease'));
      this.#set(false);
    }
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#tick = this.#round().finally(() => {
        this.#tick = undefined;
        // Jitter so that candidates do not retry in lock-step.
        this.#schedule(this.#o.retryPeriodMs * (this.#leading ? 1 : 1 + 0.2 * this.#o.random()));
      });
    }, ms);
  }

  async #round(): Promise<void> {
    // The Lease says renewed at about this time (its renewTime is taken after), so the deadline counts from here.
    const started = Date.now();
    let won = false;
    try {
      won = await this.#tryAcquireOrRenew();
    } catch (err) {
      this.#o.logger?.warn({ err: describe(err), lease: this.#o.name }, 'leader election: lease request failed');
    }
    if (this.#stopped) return;
    const { renewDeadlineMs } = this.#o;
    if (won && Date.now() - started <= renewDeadlineMs) {
      // A lapse since the last renewal (a pause) ended that term: listeners see it end and the new one begin.
      this.#stepDownIfLate();
      this.#lastRenew = started;
      clearTimeout(this.#deadline);
      this.#deadline = setTimeout(() => this.#stepDownIfLate(), renewDeadlineMs + 1);
      this.#deadline.unref();
      if (!this.#leading) {
        this.#o.logger?.info({ lease: `${this.#o.namespace}/${this.#o.name}`, identity: this.#o.identity }, 'became leader');
        this.#set(true);
      }
    } else this.#stepDownIfLate();
  }

  #stepDownIfLate(): void {
    if (!this.#leading || Date.now() - this.#lastRenew <= this.#o.renewDeadlineMs) return;
    this.#o.logger?.warn({ lease: `${this.#o.namespace}/${this.#o.name}` }, 'lost leadership (could not renew the lease in time)');
    this.#set(false);
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity, leaseDurationMs } = this.#o;
    const now = new Date();
    const durationSeconds = Math.ceil(leaseDurationMs / 1000);
    let lease: Lease;
    try {
      lease = await this.#api.read();
    } catch (err) {
      if (codeOf(err) !== 404) throw err;
      try {
        await this.#api.create({
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: { holderIdentity: identity, leaseDurationSeconds: durationSeconds, acquireTime: micro(now), renewTime: micro(now), leaseTransitions: 0 },
        });
        return true;
      } catch (e) {
        if (codeOf(e) === 409) return false; // another replica created it first
        throw e;
      }
    }
    const spec = lease.spec ?? {};
    const rv = lease.metadata?.resourceVersion;
    if (rv !== this.#observedRV) {
      this.#observedRV = rv;
      this.#observedAt = now.getTime();
    }
    const holder = spec.holderIdentity ?? '';
    const heldFor = (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (holder !== '' && holder !== identity && this.#observedAt + heldFor > now.getTime()) return false;
    const body: Lease = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: holder === identity && spec.acquireTime ? micro(new Date(spec.acquireTime)) : micro(now),
        renewTime: micro(now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === identity ? 0 : 1),
      },
    };
    try {
      await this.#api.replace(body);
      return true;
    } catch (err) {
      if (codeOf(err) === 409) return false; // someone else wrote it since we read it
      throw err;
    }
  }

  /** As client-go's ReleaseOnCancel: clear the holder so a standby need not wait for the lease to expire. */
  async #release(): Promise<void> {
    const { identity } = this.#o;
    const lease = await this.#api.read();
    if (lease.spec?.holderIdentity !== identity) return;
    const now = micro(new Date());
    await this.#api.replace({ ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now, acquireTime: now } });
  }

  #set(leading: boolean): void {
    if (this.#leading === leading) return;
    this.#leading = leading;
    for (const l of this.#listeners) l(leading);
  }
}

/** Lease times are MicroTime: RFC 3339 in UTC with exactly six fractional digits (the API server rejects others). */
function micro(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function codeOf(err: unknown): number | undefined {
  const c = (err as { code?: unknown })?.code;
  return typeof c === 'number' ? c : undefined;
}

function describe(err: unknown): string {
  const code = codeOf(err);
  const msg = (err as Error)?.message?.split('\n')[0]?.slice(0, 200) ?? String(err);
  return code ? `HTTP ${code}: ${msg}` : msg;
}
