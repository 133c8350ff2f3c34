// What the elected replica reports (controller/usage-status-writer.ts, controller/budget-events.ts), read from the
// counter store in one batch: each Group's and GatewayToken's own limits' counts in their current windows, their
// spend (spend.ts) where they have a money limit, and the spend of every money limit with a warnAt, a group's
// per-model entries included, for the budget Event. status.usage and the Event read the same spend counters, so they
// agree. Token and request counts are the limit counters: with Redis every replica's, leases included (budget a
// replica took but has not spent yet: at most a twentieth of a limit per replica); in process, this replica's.
import { currencyDigits, formatMoney } from '../../model/money.js';
import { type BudgetUse, MONEY_FIELDS, type MoneyField, type MoneyLimitRule } from '../../model/money-limits.js';
import type { RoutingTable } from '../../model/routing-table.js';
import type { LimitRule, MoneyUsage, ObjectUsage, UsageSnapshot } from '../../model/usage-limits.js';
import type { CounterKind } from './counter-store.js';
import type { Limits } from './limits.js';
import { windowAt } from './windows.js';

/** Keys per store call: one Redis script reads this many counters. */
const BATCH = 1000;

interface Subject {
  readonly kind: ObjectUsage['kind'];
  readonly namespace: string;
  readonly name: string;
  readonly rules: readonly LimitRule[];
  /** Its own money limits; with any, its spend today and this month is shown. */
  readonly money: readonly MoneyLimitRule[];
}

type Warned = MoneyLimitRule & { readonly warnAt: number };
type Budget = Pick<BudgetUse, 'kind' | 'namespace' | 'name' | 'model'> & { readonly rule: Warned };

export async function usageSnapshot(limits: Limits, table: RoutingTable | undefined, now = Date.now()): Promise<UsageSnapshot> {
  if (!table) return { objects: [], budgets: [] };
  const { limiter } = limits;
  const subjects: Subject[] = [];
  const budgets: Budget[] = [];
  const warned = (kind: Budget['kind'], namespace: string, name: string, model: string | undefined, rules: readonly MoneyLimitRule[]) => {
    for (const rule of rules) if (rule.warnAt !== undefined) budgets.push({ kind, namespace, name, model, rule: { ...rule, warnAt: rule.warnAt } });
  };
  for (const g of table.groups.values()) {
    if (g.limits.length > 0 || g.moneyLimits.length > 0)
      subjects.push({ kind: 'Group', namespace: g.namespace, name: g.name, rules: g.limits, money: g.moneyLimits });
    warned('Group', g.namespace, g.name, undefined, g.moneyLimits);
    for (const [model, rules] of g.modelMoneyLimits) warned('Group', g.namespace, g.name, model, rules);
  }
  for (const t of table.tokensByDigest.values()) {
    // A token's rules hold its group's too; its status and its Event are about its own.
    const scope = `token/${t.ref}`;
    const own = t.limits.filter((r) => r.scope === scope);
    const money = t.moneyLimits.filter((r) => r.scope === scope);
    if (own.length > 0 || money.length > 0) subjects.push({ kind: 'GatewayToken', namespace: t.namespace, name: t.name, rules: own, money });
    warned('GatewayToken', t.namespace, t.name, undefined, money);
  }

  // Every counter once: an object's spend and its Event's are the same key.
  const keys: { key: string; kind: CounterKind }[] = [];
  const index = new Map<string, number>();
  const slot = (key: string, kind: CounterKind): number => {
    let i = index.get(key);
    if (i === undefined) {
      i = keys.push({ key, kind }) - 1;
      index.set(key, i);
    }
    return i;
  };
  const spendSlot = (scope: string, window: MoneyLimitRule['window']) => slot(limiter.spend.keyOf(scope, window, now), 'window');
  const planned = subjects.map((s) => ({
    s,
    rules: s.rules.map((r) => slot(limiter.keyOf(r, now), r.window === 'none' ? 'concurrent' : 'window')),
    // In MONEY_FIELDS' order: costPerDay's day, costPerMonth's month.
    spend: s.money.length > 0 ? Object.values(MONEY_FIELDS).map((w) => spendSlot(s.money[0]!.scope, w)) : [],
  }));
  const budgetSlots = budgets.map((b) => spendSlot(b.rule.scope, b.rule.window));
  const counts: number[] = [];
  for (let i = 0; i < keys.length; i += BATCH) counts.push(...(await limits.read(keys.slice(i, i + BATCH))));
  const count = (i: number) => Math.max(0, Math.round(counts[i] ?? 0));
  // Amounts in the currency's own minor unit (JPY 0 decimals, BHD 3), as the usage records write them.
  const digits = limits.currency ? currencyDigits(limits.currency) : 2;
  const money = (micros: number) => formatMoney(micros, digits);

  const objects = planned.map(({ s, rules, spend }) => {
    const usage: Record<string, unknown> = Object.fromEntries(s.rules.map((r, i) => [r.field, { used: count(rules[i]!), limit: r.limit }]));
    (Object.keys(MONEY_FIELDS) as MoneyField[]).forEach((field, i) => {
      if (spend.length === 0) return;
      const limit = s.money.find((r) => r.field === field)?.limit;
      const spent: MoneyUsage = { used: money(count(spend[i]!)), ...(limit !== undefined ? { limit: money(limit) } : {}) };
      usage[field] = spent;
    });
    return { kind: s.kind, namespace: s.namespace, name: s.name, usage: usage as ObjectUsage['usage'] };
  });
  return {
    objects,
    budgets: budgets.map(({ rule, ...who }, i) => ({
      ...who,
      field: rule.field,
      window: rule.window,
      windowStart: windowAt(rule.window, now).start,
      spent: count(budgetSlots[i]!),
      limit: rule.limit,
      warnAt: rule.warnAt,
    })),
  };
}
