import type { BudgetUse, MoneyField } from './money-limits.js';

// Compiled usage limits: what the limits feature checks per request, precomputed by compile so a request reads a
// few arrays. A rule is one counter: a scope (whose usage it counts), a metric, a window and the most it allows.

/** What a rule counts: requests started, tokens consumed, or requests in flight. */
type LimitMetric = 'requests' | 'tokens' | 'concurrent';

/** Fixed windows aligned to UTC (a calendar minute, day, month); `none` for in-flight counts. */
export type LimitWindow = 'minute' | 'day' | 'month' | 'none';

/** The spec field a rule came from, as users write it (for messages and status). */
export type LimitField = 'requestsPerMinute' | 'tokensPerMinute' | 'tokensPerDay' | 'tokensPerMonth' | 'concurrentRequests';

export interface LimitRule {
  /** Whose usage: `token/ns/name`, `group/ns/name`, `group/ns/name/model/<model>` or `backend/<backend id>`. */
  readonly scope: string;
  readonly field: LimitField;
  readonly metric: LimitMetric;
  readonly window: LimitWindow;
  /** Most the window admits (0 admits nothing). */
  readonly limit: number;
}

const LIMIT_FIELDS: Readonly<Record<LimitField, { readonly metric: LimitMetric; readonly window: LimitWindow }>> = {
  requestsPerMinute: { metric: 'requests', window: 'minute' },
  tokensPerMinute: { metric: 'tokens', window: 'minute' },
  tokensPerDay: { metric: 'tokens', window: 'day' },
  tokensPerMonth: { metric: 'tokens', window: 'month' },
  concurrentRequests: { metric: 'concurrent', window: 'none' },
};

/** The rules of one scope from a spec's limit fields, in a fixed order; none when no field is set. */
export function limitRules(scope: string, fields: Partial<Record<LimitField, number>> | undefined): LimitRule[] {
  const out: LimitRule[] = [];
  if (!fields) return out;
  for (const field of Object.keys(LIMIT_FIELDS) as LimitField[]) {
    const limit = fields[field];
    if (limit !== undefined) out.push({ scope, field, limit, ...LIMIT_FIELDS[field] });
  }
  return out;
}

/** What one Group's or GatewayToken's own limits have counted in their current windows (for its status). */
export interface ObjectUsage {
  readonly kind: 'Group' | 'GatewayToken';
  readonly namespace: string;
  readonly name: string;
  readonly usage: Readonly<Partial<Record<LimitField, { readonly used: number; readonly limit: number }>>> & Readonly<Partial<Record<MoneyField, MoneyUsage>>>;
}

/**
 * Spend in the current UTC day (costPerDay) or calendar month (costPerMonth), known costs only, and the limit
 * where one is set; decimal strings in the gateway's currency, as money is written in specs.
 */
export interface MoneyUsage {
  readonly used: string;
  readonly limit?: string;
}

/**
 * One read of the limits store for the elected replica: each object's status.usage and where each money limit with
 * a warnAt stands (its budget Event), from the same counts.
 */
export interface UsageSnapshot {
  readonly objects: readonly ObjectUsage[];
  readonly budgets: readonly BudgetUse[];
}
