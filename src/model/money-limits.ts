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
