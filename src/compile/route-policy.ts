// Compiles a ModelRoute's failover settings (spec.retry, spec.streaming) into what the attempt loop reads.
// Kept apart from compile.ts so the defaults live in one small, table-tested place.
import { parseDuration } from './duration.js';
import { DEFAULT_RETRY_ON, type Retry, type Streaming } from './resources.js';
import { DEFAULT_RETRY_ATTEMPTS, type RetryPolicy, type RouteTimeouts } from '../model/routing-table.js';

/** The statuses of the default retryOn list, shared by every route that keeps it. */
const DEFAULT_STATUSES: ReadonlySet<number> = retryStatuses(DEFAULT_RETRY_ON);

function retryStatuses(retryOn: readonly string[]): ReadonlySet<number> {
  const statuses = new Set<number>();
  for (const r of retryOn) if (/^[0-9]+$/.test(r)) statuses.add(Number(r));
  return statuses;
}

export function compileRetry(retry: Retry | undefined, timeouts: RouteTimeouts): RetryPolicy {
  const retryOn = retry?.retryOn ?? DEFAULT_RETRY_ON;
  const statuses = retry?.retryOn ? retryStatuses(retry.retryOn) : DEFAULT_STATUSES;
  return {
    attempts: retry?.attempts ?? DEFAULT_RETRY_ATTEMPTS,
    // Twice the first-byte timeout lets one hung backend time out and a second one still answer, and the
    // deadline of the whole request caps it; an explicit budget wins.
    budgetMs: retry?.budget !== undefined ? parseDuration(retry.budget) : Math.min(2 * timeouts.firstByteMs, timeouts.totalMs),
    onConnectFailure: retryOn.includes('connect-failure'),
    onTimeout: retryOn.includes('timeout'),
    statuses,
  };
}

export function compileKeepAliveMs(streaming: Streaming | undefined): number {
  return streaming?.keepAliveInterval ? parseDuration(streaming.keepAliveInterval) : 0;
}
