import { describe, expect, it } from 'vitest';
import { limitRules, type LimitRule } from '../../model/usage-limits.js';
import { type CounterStore, StoreNotReached } from './counter-store.js';
import { Admission } from './admission.js';
import { Limiter, StoreUnavailable } from './limiter.js';
import { MemoryStore } from './memory-store.js';

const T0 = Date.UTC(2026, 10, 24, 12, 0, 5);
const clock = () => {
  let t = T0;
  return { now: () => t, advance: (ms: number) => (t += ms) };
};
const rules = (fields: Parameters<typeof limitRules>[1]) => limitRules('token/ns/a', fields);
const admitted = (r: unknown) => r instanceof Admission;

/** Two replicas (limiters) over one store that grants leases, as Redis does. */
function replicas(n: number) {
  const c = clock();
  const store = new MemoryStore({ now: c.now, leases: true });
  return { store, clock: c, limiters: Array.from({ length: n }, () => new Limiter(store, { now: c.now })) };
}

async function storeCount(store: MemoryStore, limiter: Limiter, rule: LimitRule, now: number): Promise<number> {
  return (await store.read([{ key: limiter.keyOf(rule, now), kind: rule.window === 'none' ? 'concurrent' : 'window' }]))[0]!;
}

describe('Limiter', () => {
  it('replicas sharing a store admit exactly the limit in total, whatever the interleaving', async () => {
    const { limiters } = replicas(3);
    const r = rules({ requestsPerMinute: 317 });
    let ok = 0;
    for (let i = 0; i < 1000; i++) if (admitted(await limiters[(i * 7) % 3]!.admit(r, 0))) ok++;
    expect(ok).toBe(317);
  });

  it('leases: a replica asks the store about once per twentieth of the limit while far from it', async () => {
    const c = clock();
    const store = new MemoryStore({ now: c.now, leases: true });
    let takes = 0;
    const counting: CounterStore = { ...bind(store), take: (q) => (takes++, store.take(q)) };
    const limiter = new Limiter(counting, { now: c.now });
    for (let i = 0; i < 200; i++) expect(admitted(limiter.admit(rules({ requestsPerMinute: 10_000 }), 0))).toBe(true);
    expect(takes).toBeLessThanOrEqual(1); // one lease of 500 covers 200 requests
  });

  it('settlement returns unused reservation to the replica, where the next request uses it', async () => {
    const { limiters } = replicas(1);
    const l = limiters[0]!;
    const r = rules({ tokensPerMinute: 700 });
    const a = (await l.admit(r, 600)) as Admission;
    l.settle(a, 18);
    expect(admitted(await l.admit(r, 600))).toBe(true);
    expect(admitted(await l.admit(r, 600))).toBe(false);
  });

  it('the overshoot at the limit is at most what settlements charged beyond their reservations', async () => {
    const { store, limiters, clock: c } = replicas(2);
    const r = rules({ tokensPerMinute: 10_000 });
    let overrun = 0;
    let charged = 0;
    for (let i = 0; i < 400; i++) {
      const l = limiters[i % 2]!;
      const reserve = 50 + ((i * 37) % 200);
      const a = await l.admit(r, reserve);
      if (!(a instanceof Admission)) continue;
      // Most requests use less than they reserved; every fifth uses more (an image input, an output past a default).
      const actual = i % 5 === 0 ? reserve + 40 : Math.floor(reserve / 3);
      overrun += Math.max(0, actual - reserve);
      charged += actual;
      l.settle(a, actual);
    }
    for (const l of limiters) await l.sync(true);
    expect(charged).toBeGreaterThan(9000); // the limit was reached
    expect(charged).toBeLessThanOrEqual(10_000 + overrun);
    expect(await storeCount(store, limiters[0]!, r[0]!, c.now())).toBe(charged);
  });

  it('a debt from settlement is paid to the store before the next grant', async () => {
    const { limiters } = replicas(1);
    const l = limiters[0]!;
    const r = rules({ tokensPerMonth: 1000 });
    l.settle((await l.admit(r, 100)) as Admission, 800); // 700 beyond the reservation
    expect(admitted(await l.admit(r, 300))).toBe(false); // 800 + 300 > 1000
    expect(admitted(await l.admit(r, 200))).toBe(true);
  });

  it('sync gives back leases that sat idle for a whole interval, so the store counts what was used', async () => {
    const { store, limiters, clock: c } = replicas(1);
    const l = limiters[0]!;
    const r = rules({ requestsPerMinute: 1000 });
    await l.admit(r, 0);
    expect(await storeCount(store, l, r[0]!, c.now())).toBe(1 + 50); // a lease of a twentieth
    await l.sync(); // touched in this interval: kept
    expect(await storeCount(store, l, r[0]!, c.now())).toBe(51);
    await l.sync(); // idle for a whole interval: given back
    expect(await storeCount(store, l, r[0]!, c.now())).toBe(1);
  });

  it('a changed limit drops the lease taken under the old one at once and gives it back at the next sync', async () => {
    const { store, limiters, clock: c } = replicas(1);
    const l = limiters[0]!;
    await l.admit(rules({ requestsPerMinute: 1000 }), 0); // 1 used, 50 held
    const tight = rules({ requestsPerMinute: 3 });
    expect(admitted(await l.admit(tight, 0))).toBe(false); // the lease is not spent under the new limit
    await l.sync();
    expect(await storeCount(store, l, tight[0]!, c.now())).toBe(1);
    expect(admitted(await l.admit(tight, 0))).toBe(true);
    expect(admitted(await l.admit(tight, 0))).toBe(true);
    expect(admitted(await l.admit(tight, 0))).toBe(false);
  });

  it('counters start afresh in the next window', async () => {
    const { limiters, clock: c } = replicas(1);
    const l = limiters[0]!;
    const r = rules({ requestsPerMinute: 1 });
    expect(admitted(await l.admit(r, 0))).toBe(true);
    expect(admitted(await l.admit(r, 0))).toBe(false);
    c.advance(60_000);
    expect(admitted(await l.admit(r, 0))).toBe(true);
  });

  it('in-flight slots: refused beyond the limit, reusable once released, given back by cancel', async () => {
    const { limiters } = replicas(2);
    const r = rules({ concurrentRequests: 2 });
    const a = (await limiters[0]!.admit(r, 0)) as Admission;
    const b = (await limiters[1]!.admit(r, 0)) as Admission;
    expect(admitted(await limiters[0]!.admit(r, 0))).toBe(false);
    limiters[0]!.release(a);
    limiters[0]!.release(a); // once only
    expect(admitted(await limiters[0]!.admit(r, 0))).toBe(true);
    expect(admitted(await limiters[1]!.admit(r, 0))).toBe(false);
    limiters[1]!.cancel(b);
    await limiters[1]!.sync(true);
    expect(admitted(await limiters[0]!.admit(r, 0))).toBe(true);
  });

  it('a slot cancelled after its limit changed is given back to the store, not kept forever', async () => {
    const { store, limiters, clock: c } = replicas(1);
    const l = limiters[0]!;
    const a = (await l.admit(rules({ concurrentRequests: 2 }), 0)) as Admission;
    const raised = rules({ concurrentRequests: 3 });
    l.release((await l.admit(raised, 0)) as Admission);
    l.cancel(a);
    await l.sync(true);
    expect(await storeCount(store, l, raised[0]!, c.now())).toBe(0);
  });

  it('a sync the store never got (unreachable): the leases it gave back and the debts it paid go with the next one', async () => {
    const c = clock();
    const store = new MemoryStore({ now: c.now, leases: true });
    let unreachable = true;
    const flaky: CounterStore = {
      ...bind(store),
      adjust: (a) => (unreachable ? Promise.reject(new StoreNotReached('down')) : store.adjust(a)),
    };
    const l = new Limiter(flaky, { now: c.now });
    const r = rules({ tokensPerDay: 10_000 });
    l.settle((await l.admit(r, 100)) as Admission, 40); // a lease left over to give back
    const debt = (await l.admit(r, 9_000)) as Admission;
    await l.sync(true);
    l.settle(debt, 9_200); // charged beyond what is held here
    await l.sync(true);
    unreachable = false;
    await l.sync(true);
    expect(await storeCount(store, l, r[0]!, c.now())).toBe(9_240);
  });

  it('an outage of many syncs: what waits for the store is one adjustment per counter, summed', async () => {
    const c = clock();
    const store = new MemoryStore({ now: c.now }); // no leases: each request takes from the store while adjusts fail
    let unreachable = true;
    const batches: number[] = [];
    const flaky: CounterStore = {
      ...bind(store),
      adjust: (a) => {
        batches.push(a.length);
        return unreachable ? Promise.reject(new StoreNotReached('down')) : store.adjust(a);
      },
    };
    const l = new Limiter(flaky, { now: c.now });
    const r = rules({ tokensPerDay: 100_000 });
    for (let i = 0; i < 50; i++) {
      l.settle((await l.admit(r, 10)) as Admission, 30); // a debt of 20 each time
      await l.sync(true);
    }
    unreachable = false;
    await l.sync(true);
    expect(Math.max(...batches)).toBeLessThanOrEqual(2); // the limit's counter and its spend
    expect(await storeCount(store, l, r[0]!, c.now())).toBe(1_500);
  });

  it('a request that can never fit is refused without asking the store', async () => {
    const c = clock();
    const failing: CounterStore = { ...bind(new MemoryStore({ now: c.now })), take: () => Promise.reject(new Error('not to be called')) };
    const refusal = await new Limiter(failing, { now: c.now }).admit(rules({ tokensPerDay: 1000 }), 1001);
    expect(refusal).toMatchObject({ used: undefined, cost: 1001 });
  });

  it('a failing store: fail open lets the request through uncounted and reports; fail closed refuses', async () => {
    const c = clock();
    const errors: unknown[] = [];
    const failing: CounterStore = { ...bind(new MemoryStore({ now: c.now })), take: () => Promise.reject(new Error('timeout')) };
    const open = await new Limiter(failing, { now: c.now, onStoreError: (e) => errors.push(e) }).admit(rules({ requestsPerMinute: 5 }), 0);
    expect(open).toBeInstanceOf(Admission);
    expect((open as Admission).counted).toBe(false);
    expect(errors).toHaveLength(1);
    await expect(new Limiter(failing, { now: c.now, failClosed: true }).admit(rules({ requestsPerMinute: 5 }), 0)).rejects.toBeInstanceOf(StoreUnavailable);
  });
});

/** The store's methods bound to it, to override one in a test double. */
function bind(store: MemoryStore): CounterStore {
  return {
    leases: store.leases,
    take: (q) => store.take(q),
    adjust: (a) => store.adjust(a),
    read: (k) => store.read(k),
    claim: (k, ttl) => store.claim(k, ttl),
    close: () => store.close(),
  };
}
