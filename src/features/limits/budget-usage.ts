// Where every money limit with a warnAt stands in its current window (Groups, their per-model entries, and
// GatewayTokens' own), read from the counter store in one batch beside limitsUsage (usage-status.ts), for the
// Event the elected replica creates past the threshold (controller/budget-events.ts). The counts are those
// status.usage shows: with Redis every replica's, reservations and leases included.
import type { BudgetUse, MoneyLimitRule } from '../../model/money-limits.js';
import type { RoutingTable } from '../../model/routing-table.js';
import type { Limits } from './limits.js';
import { windowAt } from './windows.js';

/** Keys per store call, as usage-status.ts reads them. */
const BATCH = 1000;

type Subject = Pick<BudgetUse, 'kind' | 'namespace' | 'name' | 'model'> & { readonly rule: MoneyLimitRule & { readonly warnAt: number } };

export async function budgetUsage(limits: Limits, table: RoutingTable | undefined, now = Date.now()): Promise<BudgetUse[]> {
  if (!table) return [];
  const subjects: Subject[] = [];
  const add = (kind: Subject['kind'], namespace: string, name: string, model: string | undefined, rules: readonly MoneyLimitRule[]) => {
    for (const rule of rules) if (rule.warnAt !== undefined) subjects.push({ kind, namespace, name, model, rule: { ...rule, warnAt: rule.warnAt } });
  };
  for (const g of table.groups.values()) {
    add('Group', g.namespace, g.name, undefined, g.moneyLimits);
    for (const [model, rules] of g.modelMoneyLimits) add('Group', g.namespace, g.name, model, rules);
  }
  for (const t of table.tokensByDigest.values()) {
    // A token's money rules hold its group's too: its own are those of its scope.
    add(
      'GatewayToken',
      t.namespace,
      t.name,
      undefined,
      t.moneyLimits.filter((r) => r.scope === `token/${t.ref}`),
    );
  }
  const keys = subjects.map((s) => ({ key: limits.limiter.keyOf(s.rule, now), kind: 'window' as const }));
  const counts: number[] = [];
  for (let i = 0; i < keys.length; i += BATCH) counts.push(...(await limits.read(keys.slice(i, i + BATCH))));
  return subjects.map(({ rule, ...who }, i) => ({
    ...who,
    field: rule.field,
    window: rule.window,
    windowStart: windowAt(rule.window, now).start,
    spent: Math.max(0, Math.round(counts[i] ?? 0)),
    limit: rule.limit,
    warnAt: rule.warnAt,
  }));
}
