// Writes status.usage of Groups and GatewayTokens: what their own limits have counted in the current windows, so
// `kubectl get groups,gatewaytokens` shows usage against the limits. Only the elected replica writes, on a timer:
// at most once per object per interval, only objects whose counts changed since its last write, paced by a token
// bucket so ten thousand active tokens become a steady trickle of PATCHes. A JSON merge patch of status.usage
// alone: it never touches the conditions the status writer owns, so it needs no resourceVersion guard.
import type { Logger } from '../observability/logger.js';
import type { Kind } from '../compile/resources.js';
import type { BudgetUse } from '../model/money-limits.js';
import type { UsageSnapshot } from '../model/usage-limits.js';
import type { StatusApi } from './status-writer.js';
import { TokenBucket } from './token-bucket.js';

export interface UsageStatusWriterOptions {
  readonly api: Pick<StatusApi, 'patchStatus'>;
  /** The counts to write, and the budgets for afterRound, in one read (the limits feature, through the composition root). */
  readonly read: () => Promise<UsageSnapshot>;
  readonly isLeader: () => boolean;
  /** Between two rounds (default 30 s). */
  readonly intervalMs?: number;
  /** Average writes per second (default 5) and burst (default 10): usage shares the API server with conditions. */
  readonly qps?: number;
  readonly burst?: number;
  /** The bucket to draw on instead of one of its own (shared with the budget Events). */
  readonly bucket?: TokenBucket;
  /** Runs after each round's writes with the round's budgets, under the same stop signal (the budget Events). */
  readonly afterRound?: (budgets: readonly BudgetUse[], signal: AbortSignal) => Promise<void>;
  readonly logger?: Logger;
  readonly now?: () => Date;
}

const DEFAULT_USAGE_STATUS_INTERVAL_MS = 30_000;

export class UsageStatusWriter {
  readonly #o: UsageStatusWriterOptions;
  readonly #bucket: TokenBucket;
  readonly #stop = new AbortController();
  /** What was last written, by kind/namespace/name (counts only: updatedAt alone is no reason to write). */
  readonly #written = new Map<string, string>();
  #timer: NodeJS.Timeout | undefined;
  #round: Promise<void> | undefined;

  constructor(options: UsageStatusWriterOptions) {
    this.#o = options;
    this.#bucket = options.bucket ?? new TokenBucket(options.qps ?? 5, options.burst ?? 10);
  }

  start(): void {
    this.#timer = setInterval(() => void this.round(), this.#o.intervalMs ?? DEFAULT_USAGE_STATUS_INTERVAL_MS);
    this.#timer.unref();
  }

  /** One round (the timer's; tests call it directly). A round still running makes this one a no-op. */
  round(): Promise<void> {
    if (this.#round || this.#stop.signal.aborted || !this.#o.isLeader()) return this.#round ?? Promise.resolve();
    this.#round = this.#write()
      .then((budgets) => (budgets ? this.#o.afterRound?.(budgets, this.#stop.signal) : undefined))
      .finally(() => {
        this.#round = undefined;
      });
    return this.#round;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#stop.abort();
    await this.#round;
  }

  /** Writes what changed; returns the budgets read with it (undefined when the read failed or the round stopped). */
  async #write(): Promise<readonly BudgetUse[] | undefined> {
    let snapshot: UsageSnapshot;
    try {
      snapshot = await this.#o.read();
    } catch (err) {
      this.#o.logger?.warn({ err: (err as Error).message }, 'reading usage for status failed; next round retries');
      return undefined;
    }
    const seen = new Set<string>();
    for (const u of snapshot.objects) {
      const key = `${u.kind}/${u.namespace}/${u.name}`;
      seen.add(key);
      const counts = JSON.stringify(u.usage);
      if (this.#written.get(key) === counts) continue;
      if (!this.#o.isLeader() || !(await this.#bucket.take(this.#stop.signal))) return undefined;
      const updatedAt = (this.#o.now?.() ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
      try {
        await this.#o.api.patchStatus(u.kind as Kind, u.namespace, u.name, { status: { usage: { ...u.usage, updatedAt } } });
        this.#written.set(key, counts);
      } catch (err) {
        // Deleted meanwhile, or the API server refused: the next round tries again (nothing is remembered).
        if ((err as { code?: unknown }).code !== 404)
          this.#o.logger?.warn({ object: key, code: (err as { code?: unknown }).code }, 'usage status write failed');
      }
    }
    for (const key of this.#written.keys()) if (!seen.has(key)) this.#written.delete(key);
    return snapshot.budgets;
  }
}
