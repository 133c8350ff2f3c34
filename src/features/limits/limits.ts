// The limits feature as the gateway wires it: one store (in-process, or Redis), this replica's limiter on top,
// its sync timer, its metrics and its log. gateway/app.ts builds one per app and plugs `transforms` into every
// family; main.ts passes the Redis options.
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../../observability/logger.js';
import { sharedMetric } from '../../observability/shared-metric.js';
import { throttled } from '../../observability/throttled.js';
import { ClaimSet } from './claim-set.js';
import type { CounterStore } from './counter-store.js';
import { Limiter } from './limiter.js';
import { MAX_LOCAL_CLAIMS, MemoryStore } from './memory-store.js';
import { RedisStore } from './redis-store.js';

export interface LimitsOptions {
  /** redis:// or rediss:// URL of the shared store; absent: counters live in this process. */
  readonly redisUrl?: string;
  /** Deadline of every store call (ms). */
  readonly timeoutMs?: number;
  /** Refuse requests (503) instead of letting them through uncounted while the store fails. */
  readonly failClosed?: boolean;
  /** How often leases go back and debts go out (ms). */
  readonly syncMs?: number;
  /** ISO 4217 code of the gateway's currency, for the messages of money limits. */
  readonly currency?: string;
  /** Under a money limit, send requests whose cost is unknown and count what can be priced (else refuse them, 403). */
  readonly allowUnpriced?: boolean;
}

const DEFAULT_STORE_TIMEOUT_MS = 50;
/** A request arriving before the shared store first answered waits this long for it (then fails open or closed). */
const STARTUP_WAIT_MS = 2_000;
const DEFAULT_SYNC_MS = 1000;
/** At most one "store failing" log line per this interval; the metric counts every failure. */
const LOG_EVERY_MS = 10_000;
/** How long a claim is kept: as long as a stored response lives upstream (OpenAI keeps them 30 days). */
const CLAIM_TTL_MS = 30 * 24 * 3600_000;

export class Limits {
  readonly limiter: Limiter;
  readonly #store: CounterStore;
  readonly #timer: NodeJS.Timeout;
  readonly refusals: Counter<'scope' | 'limit'>;
  readonly currency: string;
  readonly allowUnpriced: boolean;
  readonly #logger: Logger;
  /** Backends already logged as counted without a price (allowUnpriced), so each is logged once. */
  readonly #unpricedLogged = new Set<string>();
  readonly #onStoreError: (err: unknown) => void;
  /** Claims made while the store failed: then at least once per replica. */
  #fallbackClaims: ClaimSet | undefined;

  constructor(options: LimitsOptions, logger: Logger, registry: Registry) {
    const storeErrors = sharedMetric(registry, Counter, {
      name: 'model_gateway_limit_store_errors_total',
      help: 'Calls to the limits store (Redis) that failed or passed their deadline; requests were let through uncounted (fail open) or refused (fail closed).',
    });
    this.refusals = sharedMetric(registry, Counter, {
      name: 'model_gateway_limit_refusals_total',
      help: 'Requests refused (429) by a limit, by scope kind (token, group, backend) and limit field.',
      labelNames: ['scope', 'limit'],
    });
    const budgetWarnings = sharedMetric(registry, Counter, {
      name: 'model_gateway_budget_warnings_total',
      help: "Money limits (costPerDay, costPerMonth) whose spend crossed their warnAt threshold, counted once per window by the replica whose pushed spend took it across; by the request's group, scope kind (token, group, model) and limit field.",
      labelNames: ['group', 'scope', 'limit'],
    });
    this.currency = options.currency ?? '';
    this.allowUnpriced = options.allowUnpriced ?? false;
    this.#logger = logger;
    const timeoutMs = options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
    this.#store = options.redisUrl
      ? new RedisStore({
          url: options.redisUrl,
          timeoutMs,
          startupWaitMs: STARTUP_WAIT_MS,
          onState: stateLog(logger),
        })
      : new MemoryStore();
    const warn = throttled(LOG_EVERY_MS);
    this.#onStoreError = (err) => {
      storeErrors.inc();
      warn((suppressed) =>
        logger.warn(
          { error: (err as Error).message, suppressed, failClosed: options.failClosed ?? false },
          'limits store call failed; requests pass uncounted (fail open) or are refused (fail closed) until it answers',
        ),
      );
    };
    this.limiter = new Limiter(this.#store, {
      failClosed: options.failClosed ?? false,
      onBudgetCrossed: (rule, group) =>
        budgetWarnings.inc({ group, scope: rule.scope.split('/').length > 3 ? 'model' : rule.scope.slice(0, rule.scope.indexOf('/')), limit: rule.field }),
      onStoreError: this.#onStoreError,
    });
    this.#timer = setInterval(() => void this.limiter.sync(), options.syncMs ?? DEFAULT_SYNC_MS);
    this.#timer.unref();
  }

  /** Logs once per backend that a request under a money limit went to it without its price (allowUnpriced). */
  noteUnpriced(model: string, backend: string): void {
    const id = `${model}/${backend}`;
    if (this.#unpricedLogged.has(id)) return;
    this.#unpricedLogged.add(id);
    this.#logger.warn(
      { model, backend },
      'a request under a spend limit used a backend without the prices it needs; counted at what could be priced (--allow-unpriced)',
    );
  }

  /**
   * True the first time a finished background response (its claim key) is claimed for its usage record: once over
   * every replica with Redis, once in this process without. While Redis fails, once in this replica (counted twice
   * rather than lost when another replica claimed it too).
   */
  async claimOnce(claimKey: string): Promise<boolean> {
    const key = `mg:background:${claimKey}`;
    try {
      return await this.#store.claim(key, CLAIM_TTL_MS);
    } catch (err) {
      this.#onStoreError(err);
      this.#fallbackClaims ??= new ClaimSet(MAX_LOCAL_CLAIMS);
      return this.#fallbackClaims.claim(key, CLAIM_TTL_MS);
    }
  }

  /** True once the counters can be counted: at once in process; with Redis, once it has answered (readiness). */
  get answered(): boolean {
    return this.#store instanceof RedisStore ? this.#store.answered : true;
  }

  /** Waits (at most `ms`, if given) for the store's first answer; false when it did not come or the store closed. */
  async ready(ms?: number): Promise<boolean> {
    return this.#store instanceof RedisStore ? this.#store.ready(ms) : true;
  }

  /** Current counts of the given counters, for status. */
  read(keys: Parameters<CounterStore['read']>[0]): Promise<number[]> {
    return this.#store.read(keys);
  }

  /** Gives back every lease, then disconnects. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.limiter.sync(true);
    await this.#store.close();
  }
}

/** Logs the store's connection going down once per outage, and coming back. */
function stateLog(logger: Logger): (state: 'ready' | 'down', detail?: string) => void {
  let down = false;
  return (state, detail) => {
    if (state === 'down' && !down) {
      down = true;
      logger.warn({ error: detail }, 'limits store (Redis) unreachable');
    } else if (state === 'ready') {
      if (down) logger.info('limits store (Redis) reachable again');
      down = false;
    }
  };
}
