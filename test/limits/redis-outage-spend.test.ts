// Spend settled while Redis is unreachable: the replica's sync cannot push it, and must not lose it. A limiter on a
// real RedisStore (its sync driven by the test, no timer) settles a request, Redis is killed, a sync fails, Redis
// comes back (empty: the test reads only what is pushed after), and the next sync carries what the failed one did.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admission } from '../../src/features/limits/admission.js';
import { Limiter } from '../../src/features/limits/limiter.js';
import { RedisStore } from '../../src/features/limits/redis-store.js';
import type { MoneyLimitRule } from '../../src/model/money-limits.js';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import { waitUntil } from '../support/wait.js';

let redis: TestRedis;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const budget: MoneyLimitRule = { scope: 'group/ns/team', field: 'costPerMonth', window: 'month', limit: 10_000_000, warnAt: undefined };

describe('spend settled while Redis is unreachable', () => {
  it('goes out with the first sync after Redis is back, and counts once', async () => {
    let down = false;
    const store = new RedisStore({ url: redis.url, timeoutMs: 1000, startupWaitMs: 5_000, onState: (s) => (down = s === 'down') });
    const errors: unknown[] = [];
    const limiter = new Limiter(store, { onStoreError: (e) => errors.push(e) });
    const reader = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    reader.on('error', () => {}); // down on purpose for a while
    try {
      expect(await store.ready(5_000)).toBe(true);
      const a = await limiter.admit([], 0, { rules: [budget], micros: 300_000 });
      expect(a).toBeInstanceOf(Admission);
      limiter.settle(a as Admission, 0, 75_000);
      await redis.kill();
      await waitUntil(async () => down, 10_000, 'the store to see Redis gone');
      await limiter.sync();
      expect(errors).toHaveLength(1);
      expect(limiter.spent(budget)).toBe(75_000);
      await redis.restart();
      await waitUntil(async () => (await reader.ping().catch(() => '')) === 'PONG', 10_000, 'Redis back');
      const key = limiter.spend.keyOf(budget.scope, 'month', Date.now());
      await waitUntil(
        async () => {
          await limiter.sync();
          return (await reader.get(key)) !== null;
        },
        10_000,
        'a sync to reach Redis',
      );
      expect(Number(await reader.get(key))).toBe(75_000);
      await limiter.sync();
      expect(Number(await reader.get(key))).toBe(75_000);
      expect(limiter.spent(budget)).toBe(75_000);
    } finally {
      reader.disconnect();
      await store.close();
    }
  });
});
