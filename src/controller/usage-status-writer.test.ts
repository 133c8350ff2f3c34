import { describe, expect, it } from 'vitest';
import type { BudgetUse } from '../model/money-limits.js';
import type { ObjectUsage } from '../model/usage-limits.js';
import { UsageStatusWriter } from './usage-status-writer.js';

function setup(
  options: { leader?: () => boolean; fail?: (name: string) => number | undefined; budgets?: BudgetUse[]; afterRound?: (b: readonly BudgetUse[]) => void } = {},
) {
  const patches: { kind: string; name: string; body: Record<string, unknown> }[] = [];
  let usage: ObjectUsage[] = [];
  let reads = 0;
  const writer = new UsageStatusWriter({
    api: {
      patchStatus: async (kind, _ns, name, body) => {
        const code = options.fail?.(name);
        if (code) throw Object.assign(new Error('refused'), { code });
        patches.push({ kind, name, body });
      },
    },
    read: async () => {
      reads++;
      return { objects: usage, budgets: options.budgets ?? [] };
    },
    ...(options.afterRound ? { afterRound: async (b: readonly BudgetUse[]) => options.afterRound?.(b) } : {}),
    isLeader: options.leader ?? (() => true),
    qps: 1000,
    burst: 1000,
    now: () => new Date('2026-11-25T10:00:00.123Z'),
  });
  return { writer, patches, set: (u: ObjectUsage[]) => (usage = u), reads: () => reads };
}

const token = (name: string, used: number): ObjectUsage => ({ kind: 'GatewayToken', namespace: 'ai', name, usage: { tokensPerDay: { used, limit: 1000 } } });

describe('UsageStatusWriter', () => {
  it('patches status.usage alone, with the counts and when they were read', async () => {
    const { writer, patches, set } = setup();
    set([token('alice', 5), { kind: 'Group', namespace: 'ai', name: 'team', usage: { tokensPerMonth: { used: 9, limit: 100 } } }]);
    await writer.round();
    expect(patches).toEqual([
      { kind: 'GatewayToken', name: 'alice', body: { status: { usage: { tokensPerDay: { used: 5, limit: 1000 }, updatedAt: '2026-11-25T10:00:00Z' } } } },
      { kind: 'Group', name: 'team', body: { status: { usage: { tokensPerMonth: { used: 9, limit: 100 }, updatedAt: '2026-11-25T10:00:00Z' } } } },
    ]);
  });

  it('writes an object again only when its counts changed', async () => {
    const { writer, patches, set } = setup();
    set([token('alice', 5), token('bob', 1)]);
    await writer.round();
    await writer.round();
    expect(patches).toHaveLength(2);
    set([token('alice', 6), token('bob', 1)]);
    await writer.round();
    expect(patches.map((p) => p.name)).toEqual(['alice', 'bob', 'alice']);
  });

  it('writes nothing unless leader', async () => {
    let leader = false;
    const { writer, patches, set } = setup({ leader: () => leader });
    set([token('alice', 5)]);
    await writer.round();
    expect(patches).toEqual([]);
    leader = true;
    await writer.round();
    expect(patches).toHaveLength(1);
  });

  it('a refused write is tried again next round; one object failing does not stop the others', async () => {
    let refuse = true;
    const { writer, patches, set } = setup({ fail: (name) => (name === 'alice' && refuse ? 500 : undefined) });
    set([token('alice', 5), token('bob', 1)]);
    await writer.round();
    expect(patches.map((p) => p.name)).toEqual(['bob']);
    refuse = false;
    await writer.round();
    expect(patches.map((p) => p.name)).toEqual(['bob', 'alice']);
  });

  it('hands the budgets of its one read to afterRound (the budget Events read nothing of their own)', async () => {
    const budget: BudgetUse = {
      ...{ kind: 'Group', namespace: 'ai', name: 'team', model: undefined },
      ...{ field: 'costPerDay', window: 'day', windowStart: 0, spent: 9, limit: 10, warnAt: 80 },
    };
    const seen: (readonly BudgetUse[])[] = [];
    const { writer, reads } = setup({ budgets: [budget], afterRound: (b) => seen.push(b) });
    await writer.round();
    expect(seen).toEqual([[budget]]);
    expect(reads()).toBe(1);
  });
});
