// What each Group's and GatewayToken's own limits have counted in their current windows, and their spend where they
// have a money limit, read from the counter store in one batch, for the status the elected replica writes (controller/usage-status-writer.ts). Per-model
// limits of a group are not reported. With Redis the counts are every replica's, leases included (budget a
// replica took but has not spent yet: at most a twentieth of a limit per replica); in process, this replica's.
import { formatMoney } from '../../model/money.js';
import { MONEY_FIELDS, type MoneyField, type MoneyLimitRule } from '../../model/money-limits.js';
import type { RoutingTable } from '../../model/routing-table.js';
import type { LimitRule, MoneyUsage, ObjectUsage } from '../../model/usage-limits.js';
import type { CounterKind } from './counter-store.js';
import type { Limits } from './limits.js';
import { spendKey } from './spend.js';

/** Keys per store call: one Redis script reads this many counters. */
const BATCH = 1000;

interface Subject {
  readonly kind: ObjectUsage['kind'];
  readonly namespace: string;
  readonly name: string;
  readonly rules: readonly LimitRule[];
  /** Its own money limits; with any, its spend today and this month is shown (spend.ts counts it). */
  readonly money: readonly MoneyLimitRule[];
}

export async function limitsUsage(limits: Limits, table: RoutingTable | undefined, now = Date.now()): Promise<ObjectUsage[]> {
  if (!table) return [];
  const subjects: Subject[] = [];
  for (const g of table.groups.values()) {
    if (g.limits.length > 0 || g.moneyLimits.length > 0)
      subjects.push({ kind: 'Group', namespace: g.namespace, name: g.name, rules: g.limits, money: g.moneyLimits });
  }
  for (const t of table.tokensByDigest.values()) {
    // A token's rules hold its group's too; its status shows its own.
    const scope = `token/${t.ref}`;
    const own = t.limits.filter((r) => r.scope === scope);
    const money = t.moneyLimits.filter((r) => r.scope === scope);
    if (own.length > 0 || money.length > 0) subjects.push({ kind: 'GatewayToken', namespace: t.namespace, name: t.name, rules: own, money });
  }
  const keys = subjects.flatMap((s) => [
    ...s.rules.map((r) => ({ key: limits.limiter.keyOf(r, now), kind: r.window === 'none' ? ('concurrent' as const) : ('window' as const) })),
    ...(s.money.length > 0 ? spendKeys(s.money[0]!.scope, now) : []),
  ]);
  const counts: number[] = [];
  for (let i = 0; i < keys.length; i += BATCH) counts.push(...(await limits.read(keys.slice(i, i + BATCH))));
  let at = 0;
  return subjects.map((s) => {
    const usage: Record<string, unknown> = Object.fromEntries(
      s.rules.map((r) => [r.field, { used: Math.max(0, Math.round(counts[at++] ?? 0)), limit: r.limit }]),
    );
    if (s.money.length > 0) {
      for (const field of Object.keys(MONEY_FIELDS) as MoneyField[]) {
        const limit = s.money.find((r) => r.field === field)?.limit;
        const spent: MoneyUsage = {
          used: formatMoney(Math.max(0, Math.round(counts[at++] ?? 0))),
          ...(limit !== undefined ? { limit: formatMoney(limit) } : {}),
        };
        usage[field] = spent;
      }
    }
    return { kind: s.kind, namespace: s.namespace, name: s.name, usage: usage as ObjectUsage['usage'] };
  });
}

/** The spend counters of a scope, in MONEY_FIELDS' order (costPerDay's day, costPerMonth's month). */
function spendKeys(scope: string, now: number): { key: string; kind: CounterKind }[] {
  return (Object.values(MONEY_FIELDS) as ('day' | 'month')[]).map((w) => ({ key: spendKey(scope, w, now), kind: 'window' as const }));
}
