// Money limits in the limiter: reserved at the largest cost beside token rules, settled to the exact cost.
import { describe, expect, it } from 'vitest';
import type { MoneyLimitRule } from '../../model/money-limits.js';
import { limitRules } from '../../model/usage-limits.js';
import type { CounterStore } from './counter-store.js';
import { Admission } from './admission.js';
import { Limiter } from './limiter.js';
import { MemoryStore } from './memory-store.js';

const T0 = Date.UTC(2026, 10, 24, 12, 0, 5);
const budget = (limit: number, warnAt?: number): MoneyLimitRule => ({ scope: 'group/ns/team', field: 'costPerMonth', window: 'month', limit, warnAt });

function replicas(n: number) {
  const now = () => T0;
  const store = new MemoryStore({ now, leases: true });
  return { store, now, limiters: Array.from({ length: n }, () => new Limiter(store, { now })) };
}

describe('money limits in the limiter', () => {
  it('replicas reserving the largest cost and settling the exact one never spend past the budget, and use it up', async () => {
    const { store, now, limiters } = replicas(2);
    const rule = budget(1_000_000);
    let spent = 0;
    let refusedAt: number | undefined;
    for (let i = 0; i < 200; i++) {
      const l = limiters[i % 2]!;
      const reserve = 60_000 + ((i * 7919) % 40_000);
      const a = await l.admit([], 0, { rules: [rule], micros: reserve });
      if (!(a instanceof Admission)) {
        refusedAt ??= spent;
        continue;
      }
      const exact = Math.floor(reserve / 4) + (i % 3);
      spent += exact;
      l.settle(a, 0, exact);
    }
    for (const l of limiters) await l.sync(true);
    expect(spent).toBeLessThanOrEqual(1_000_000);
    // Refused only when the largest reservation no longer fitted: at most 100,000 µ were left unspent.
    expect(spent).toBeGreaterThan(1_000_000 - 100_000);
    expect(refusedAt).toBeDefined();
    const [count] = await store.read([{ key: limiters[0]!.keyOf(rule, now()), kind: 'window' }]);
    expect(count).toBe(spent);
  });

  it('charges what no admission reserved (a background completion): as spend, and as a debt the store learns at the next sync, which every replica then meets', async () => {
    const { store, now, limiters } = replicas(2);
    const [a, b] = limiters as [Limiter, Limiter];
    const rule = budget(1_000_000);
    const tokens = limitRules('token/ns/a', { tokensPerDay: 100_000 });
    const first = (await a.admit(tokens, 100, { rules: [rule], micros: 10_000 })) as Admission;
    a.settle(first, 80, 5_000);
    a.charge(tokens, 90_000, { rules: [rule], micros: 990_000, group: 'ns/team' });
    expect(a.spent(rule)).toBe(995_000);
    // This replica counts its own debt at once; the store, and so the other replica, after the sync.
    expect(await a.admit([], 0, { rules: [rule], micros: 10_000 })).toMatchObject({ rule });
    await a.sync(true);
    const [money, used] = await store.read([
      { key: a.keyOf(rule, now()), kind: 'window' },
      { key: a.keyOf(tokens[0]!, now()), kind: 'window' },
    ]);
    expect([money, used]).toEqual([995_000, 90_080]);
    expect(await b.admit([], 0, { rules: [rule], micros: 10_000 })).toMatchObject({ rule, used: 995_000 });
    expect(await b.admit(tokens, 10_000, undefined)).toMatchObject({ rule: tokens[0] });
  });

  it('refuses with the money rule, and a cost beyond the whole limit as one that can never fit', async () => {
    const { limiters } = replicas(1);
    const l = limiters[0]!;
    const rule = budget(100);
    const tokens = limitRules('token/ns/a', { tokensPerDay: 1_000_000 });
    const never = l.admit(tokens, 10, { rules: [rule], micros: 101 });
    expect(never).toMatchObject({ rule, cost: 101, used: undefined });
    const a = (await l.admit(tokens, 10, { rules: [rule], micros: 100 })) as Admission;
    expect(a).toBeInstanceOf(Admission);
    expect(await l.admit(tokens, 10, { rules: [rule], micros: 1 })).toMatchObject({ rule, used: 100 });
  });

  it('settles tokens and money apart; an unknown cost (undefined) keeps the money reserved', async () => {
    const { limiters } = replicas(1);
    const l = limiters[0]!;
    const rule = budget(1000);
    l.settle((await l.admit([], 0, { rules: [rule], micros: 600 })) as Admission, 5, undefined);
    expect(l.spent(rule)).toBe(600);
    l.settle((await l.admit([], 0, { rules: [rule], micros: 300 })) as Admission, 5, 120);
    expect(l.spent(rule)).toBe(720);
  });

  it('tells where each money rule stood before the request', async () => {
    const { limiters } = replicas(1);
    const l = limiters[0]!;
    const rule = budget(1000, 50);
    l.settle((await l.admit([], 0, { rules: [rule], micros: 700 })) as Admission, 0, 550);
    const a = (await l.admit([], 0, { rules: [rule], micros: 100 })) as Admission;
    expect(l.spentBefore(a)).toEqual([{ rule, spent: 550 }]);
  });

  it('a budget changed while requests are in flight: their refunds and cancellations still reach the store', async () => {
    const { store, now, limiters } = replicas(1);
    const l = limiters[0]!;
    const settled = (await l.admit([], 0, { rules: [budget(1_000_000)], micros: 300_000 })) as Admission;
    const cancelled = (await l.admit([], 0, { rules: [budget(1_000_000)], micros: 200_000 })) as Admission;
    // The new table's rule: the same counter under a raised limit.
    const raised = budget(2_000_000);
    l.settle((await l.admit([], 0, { rules: [raised], micros: 1_000 })) as Admission, 0, 1_000);
    l.settle(settled, 0, 75_000);
    l.cancel(cancelled);
    await l.sync(true);
    const [count] = await store.read([{ key: l.keyOf(raised, now()), kind: 'window' }]);
    expect(count).toBe(76_000);
    expect(l.spent(raised)).toBe(76_000);
  });

  it('a budget changed while the store is granting a lease: the lease comes back to the store, not to the old hold', async () => {
    const now = () => T0;
    const store = new MemoryStore({ now, leases: true });
    const answers: (() => void)[] = [];
    // A store that answers takes when the test says, as Redis does after a round trip.
    const slow: CounterStore = {
      leases: true,
      take: (q) => new Promise((resolve) => answers.push(() => resolve(store.take(q)))),
      adjust: (a) => store.adjust(a),
      read: (k) => store.read(k),
      claim: (k, ttl) => store.claim(k, ttl),
      close: () => store.close(),
    };
    const l = new Limiter(slow, { now });
    const first = l.admit([], 0, { rules: [budget(1_000_000)], micros: 300_000 });
    const raised = budget(2_000_000);
    const second = l.admit([], 0, { rules: [raised], micros: 1_000 });
    for (const answer of answers) answer();
    l.settle((await first) as Admission, 0, 75_000);
    l.settle((await second) as Admission, 0, 1_000);
    await l.sync(true);
    const [count] = await store.read([{ key: l.keyOf(raised, now()), kind: 'window' }]);
    expect(count).toBe(76_000);
  });

  it("a request in flight at midnight is spent in the day it ends, and that day's limit counts it: never spent past", async () => {
    let t = Date.UTC(2026, 10, 24, 23, 59, 59, 500);
    const now = () => t;
    const store = new MemoryStore({ now, leases: true });
    const l = new Limiter(store, { now });
    const daily: MoneyLimitRule = { scope: 'token/ns/alice', field: 'costPerDay', window: 'day', limit: 1_000_000, warnAt: undefined };
    const late = (await l.admit([], 0, { rules: [daily], micros: 300_000 })) as Admission;
    t += 1_000;
    l.settle(late, 0, 200_000);
    await l.sync();
    // The new day has spent 200,000: a request that may cost 900,000 no longer fits under 1,000,000.
    expect(l.spent(daily)).toBe(200_000);
    expect(await l.admit([], 0, { rules: [daily], micros: 900_000 })).toMatchObject({ rule: daily });
    const fits = (await l.admit([], 0, { rules: [daily], micros: 800_000 })) as Admission;
    l.settle(fits, 0, 800_000);
    await l.sync(true);
    expect(l.spent(daily)).toBe(1_000_000);
    const [count] = await store.read([{ key: l.keyOf(daily, t), kind: 'window' }]);
    expect(count).toBe(1_000_000);
  });
});
