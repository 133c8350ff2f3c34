// Spend beside the money limits: two replicas on one store (the in-process store with leases, as Redis grants them).
import { describe, expect, it } from 'vitest';
import type { MoneyLimitRule } from '../../model/money-limits.js';
import { Admission } from './admission.js';
import { Limiter } from './limiter.js';
import { MemoryStore } from './memory-store.js';

const T0 = Date.UTC(2026, 10, 24, 12, 0, 5);
const rule: MoneyLimitRule = { scope: 'group/ns/team', field: 'costPerMonth', window: 'month', limit: 1_000_000, warnAt: 50 };

function replicas() {
  let now = T0;
  const store = new MemoryStore({ now: () => now, leases: true });
  const crossed: string[] = [];
  const limiters = ['a', 'b'].map((name) => new Limiter(store, { now: () => now, onBudgetCrossed: (r, group) => crossed.push(`${name} ${group} ${r.field}`) }));
  return { store, limiters, crossed, later: (ms: number) => (now += ms) };
}

async function spend(l: Limiter, reserve: number, exact: number): Promise<void> {
  const a = await l.admit([], 0, { rules: [rule], micros: reserve, group: 'ns/team' });
  expect(a).toBeInstanceOf(Admission);
  l.settle(a as Admission, 0, exact);
}

describe('spend', () => {
  it('counts what settlements charged, not reservations or leases; a crossing of warnAt is counted once over replicas', async () => {
    const { store, limiters, crossed } = replicas();
    const [a, b] = limiters as [Limiter, Limiter];
    // Nine requests of 60,000 µ (each reserving 100,000), alternating, each replica syncing after each: the ninth
    // takes the spend from 480,000 to 540,000, past 50%.
    for (let i = 0; i < 9; i++) {
      const l = i % 2 ? b : a;
      await spend(l, 100_000, 60_000);
      await l.sync();
    }
    const [spent, limitCount] = await store.read([
      { key: a.spend.keyOf(rule.scope, 'month', T0), kind: 'window' },
      { key: a.keyOf(rule, T0), kind: 'window' },
    ]);
    expect(spent).toBe(540_000);
    // The limit's own counter runs ahead by the leases the replicas hold.
    expect(limitCount).toBeGreaterThan(540_000);
    expect(crossed).toEqual(['a ns/team costPerMonth']);
    // The other replica syncing its earlier spend again crosses nothing.
    await b.sync();
    expect(crossed).toHaveLength(1);
  });

  it("a replica knows the store's spend as of its last sync, and its own since", async () => {
    const { store, limiters } = replicas();
    const [a, b] = limiters as [Limiter, Limiter];
    await spend(a, 100_000, 60_000);
    expect(a.spent(rule)).toBe(60_000);
    expect(b.spent(rule)).toBe(0);
    await a.sync();
    await spend(b, 100_000, 10_000);
    expect(b.spent(rule)).toBe(10_000);
    await b.sync(); // learns a's pushed spend with its own push
    expect(b.spent(rule)).toBe(70_000);
    expect(a.spent(rule)).toBe(60_000);
    // A replica whose requests spend on a warnAt rule learns its spend at its next sync, before any settles.
    const c = new Limiter(store, { now: () => T0 });
    const admitted = (await c.admit([], 0, { rules: [rule], micros: 100_000 })) as Admission;
    expect(c.spentBefore(admitted)).toEqual([{ rule, spent: 0 }]);
    await c.sync();
    expect(c.spent(rule)).toBe(70_000);
  });

  it("an unknown cost is counted at the reservation it keeps; a scope's day and month both count", async () => {
    const { store, limiters } = replicas();
    const [a] = limiters as [Limiter];
    const res = await a.admit([], 0, { rules: [rule], micros: 100_000 });
    a.settle(res as Admission, 0, undefined);
    await a.sync();
    const keys = (['day', 'month'] as const).map((w) => ({ key: a.spend.keyOf(rule.scope, w, T0), kind: 'window' as const }));
    expect(await store.read(keys)).toEqual([100_000, 100_000]);
  });

  it('starts afresh in the next window', async () => {
    const { store, limiters, later } = replicas();
    const [a] = limiters as [Limiter];
    await spend(a, 100_000, 60_000);
    await a.sync();
    const next = later(40 * 86_400_000);
    expect(a.spent(rule)).toBe(0);
    await spend(a, 100_000, 10_000);
    await a.sync();
    expect(a.spent(rule)).toBe(10_000);
    const month = (t: number) => ({ key: a.spend.keyOf(rule.scope, 'month', t), kind: 'window' as const });
    expect(await store.read([month(next)])).toEqual([10_000]);
  });

  it("what settled in a day's last moment, synced after midnight, is in that day's figure", async () => {
    const { store, limiters, later } = replicas();
    const [a] = limiters as [Limiter];
    const lastSecond = later(Date.UTC(2026, 10, 25) - T0 - 500);
    await spend(a, 100_000, 60_000);
    later(1_000);
    await a.sync();
    const keys = (['day', 'month'] as const).map((w) => ({ key: a.spend.keyOf(rule.scope, w, lastSecond), kind: 'window' as const }));
    expect(await store.read(keys)).toEqual([60_000, 60_000]);
  });

  it('a request let through uncounted while the store fails (fail open) still counts as spend', async () => {
    const store = new MemoryStore({ now: () => T0, leases: true });
    const failingTakes = {
      leases: true,
      take: () => Promise.reject(new Error('timeout')),
      adjust: store.adjust.bind(store),
      read: store.read.bind(store),
      claim: store.claim.bind(store),
      close: () => store.close(),
    };
    const l = new Limiter(failingTakes, { now: () => T0, onStoreError: () => {} });
    const a = await l.admit([], 0, { rules: [rule], micros: 100_000, group: 'ns/team' });
    expect(a).toMatchObject({ counted: false });
    l.settle(a as Admission, 0, 60_000);
    expect(l.spent(rule)).toBe(60_000);
    await l.sync();
    expect(await store.read([{ key: l.spend.keyOf(rule.scope, 'month', T0), kind: 'window' }])).toEqual([60_000]);
  });
});
