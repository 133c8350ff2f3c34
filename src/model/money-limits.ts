// Compiled money limits (costPerDay, costPerMonth on Groups, GatewayTokens and a group's per-model entries): kept
// apart from the request and token rules (usage-limits.ts), which the limiter enforces as they are, so a money limit
// can never be counted as a request or a token. Amounts are micro-units of the gateway's currency (money.ts).

export type MoneyField = 'costPerDay' | 'costPerMonth';

export interface MoneyLimitRule {
  /** Whose spend: `token/ns/name`, `group/ns/name` or `group/ns/name/model/<model>`, as for usage-limits.ts. */
  readonly scope: string;
  readonly field: MoneyField;
  /** The UTC day or calendar month (UTC). */
  readonly window: 'day' | 'month';
  /** Most the window admits, in micro-units (0 admits nothing). */
  readonly limit: number;
  /** The block's warnAt: percentage of the limit past which a warning is raised; undefined for none. */
  readonly warnAt: number | undefined;
}

export const MONEY_FIELDS: Readonly<Record<MoneyField, 'day' | 'month'>> = { costPerDay: 'day', costPerMonth: 'month' };

/**
 * Where one money limit with a warnAt stands in its current window, for the Kubernetes Event the elected replica
 * creates when it is past the threshold (controller/budget-events.ts). Read by the limits feature.
 */
export interface BudgetUse {
  readonly kind: 'Group' | 'GatewayToken';
  readonly namespace: string;
  readonly name: string;
  readonly field: MoneyField;
  /** The public model of a group's per-model entry; undefined for the object's own limit. */
  readonly model: string | undefined;
  readonly window: 'day' | 'month';
  /** Epoch ms of the window's start (UTC). */
  readonly windowStart: number;
  /** Micro-units counted in the window, and the limit. */
  readonly spent: number;
  readonly limit: number;
  readonly warnAt: number;
}
