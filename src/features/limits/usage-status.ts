// What each Group's and GatewayToken's own limits have counted in their current windows, read from the counter
// store in one batch, for the status the elected replica writes (controller/usage-status-writer.ts). Per-model
// limits of a group are not reported. With Redis the counts are every replica's, leases included (budget a
// replica took but has not spent yet: at most a twentieth of a limit per replica); in process, this replica's.
import type { RoutingTable } from '../../model/routing-table.js';
import type { LimitRule, ObjectUsage } from '../../model/usage-limits.js';
import type { Limits } from './limits.js';

/** Keys per store call: one Redis script reads this many counters. */
const BATCH = 1000;

interface Subject {
  readonly kind: ObjectUsage['kind'];
  readonly namespace: string;
  readonly name: string;
  readonly rules: readonly LimitRule[];
}

export async function limitsUsage(limits: Limits, table: RoutingTable | undefined, now = Date.now()): Promise<ObjectUsage[]> {
  if (!table) return [];
  const subjects: Subject[] = [];
  for (const g of table.groups.values()) if (g.limits.length > 0) subjects.push({ kind: 'Group', namespace: g.namespace, name: g.name, rules: g.limits });
  for (const t of table.tokensByDigest.values()) {
    // A token's rules hold its group's too; its status shows its own.
    const own = t.limits.filter((r) => r.scope === `token/${t.ref}`);
    if (own.length > 0) subjects.push({ kind: 'GatewayToken', namespace: t.namespace, name: t.name, rules: own });
  }
  const keys = subjects.flatMap((s) =>
    s.rules.map((r) => ({ key: limits.limiter.keyOf(r, now), kind: r.window === 'none' ? ('concurrent' as const) : ('window' as const) })),
  );
  const counts: number[] = [];
  for (let i = 0; i < keys.length; i += BATCH) counts.push(...(await limits.read(keys.slice(i, i + BATCH))));
  let at = 0;
  return subjects.map((s) => ({
    kind: s.kind,
    namespace: s.namespace,
    name: s.name,
    usage: Object.fromEntries(s.rules.map((r) => [r.field, { used: Math.max(0, Math.round(counts[at++] ?? 0)), limit: r.limit }])),
  }));
}
