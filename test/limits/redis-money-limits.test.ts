// A costPerMonth budget shared by two gateway processes (the real executable) on one real Redis: waves of 50
// concurrent requests until the budget is spent, then a price change saved to the manifest file. The fake upstream
// reports 11 input and 7 output tokens per answer, so at 100 and 200 per million tokens each answer costs exactly
// 2,500 µ, and twice that after the change; the store's counter is read straight from Redis.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import type { CliRun } from '../support/spawn-cli.js';
import { waitUntil } from '../support/wait.js';
import { KEYS, limitsManifests } from './manifests.js';
import { startReplica, stopReplicas } from './replica.js';

const BUDGET = 100_000; // "0.10"
const COST = 2_500;
/** A request's reservation here: its ~100 body bytes at the input price plus max_tokens 8 at the output price. */
const MAX_RESERVATION = 15_000;

let redis: TestRedis;
let store: Redis;
let upstream: RecordingUpstream;

beforeAll(async () => {
  redis = await startRedis();
  store = new Redis(redis.url);
  upstream = await startRecordingUpstream();
});
afterAll(async () => {
  store?.disconnect();
  await upstream?.close();
  await redis?.stop();
});

async function ask(c: OpenAI): Promise<{ status: number; code?: string | null }> {
  try {
    await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
    return { status: 200 };
  } catch (err) {
    const e = err as InstanceType<typeof OpenAI.APIError>;
    return { status: e.status ?? 0, code: e.code };
  }
}

/** The group's costPerMonth counter in Redis (micro-units; reservations and leases included until they settle). */
async function counter(): Promise<number> {
  const keys = await store.keys('mg:group/default/team:costPerMonth:*');
  expect(keys.length).toBeLessThanOrEqual(1);
  return keys.length === 0 ? 0 : Number(await store.get(keys[0]!));
}

// Steps of one story, each building on the last: they run in this order even under --sequence.shuffle.
describe('a costPerMonth budget on two gateway processes sharing one Redis', { shuffle: false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'mg-money-'));
  const write = (budget: string, prices: string) =>
    writeFileSync(join(dir, 'limits.yaml'), limitsManifests({ upstream: upstream.baseURL, group: `{costPerMonth: "${budget}"}`, primaryPricing: prices }));
  const gateways: { run: CliRun; alice: OpenAI; bob: OpenAI }[] = [];

  beforeAll(async () => {
    write('0.10', '{inputPerMTok: "100", outputPerMTok: "200"}');
    for (let i = 0; i < 2; i++) {
      // A store deadline long enough that no call fails open (uncounted) on a busy machine.
      const { run, api } = await startReplica({ dir, redisUrl: redis.url, storeTimeout: '1000ms', listeningWithinMs: 30_000 });
      await run.waitForLog((r) => r.msg === 'first config loaded; ready', 30_000);
      const baseURL = `${api}/v1`;
      const client = (apiKey: string) => new OpenAI({ apiKey, baseURL, maxRetries: 0, timeout: 10_000 });
      gateways.push({ run, alice: client(KEYS.alice), bob: client(KEYS.bob) });
    }
  }, 90_000);

  afterAll(async () => {
    await stopReplicas(gateways);
    rmSync(dir, { recursive: true, force: true });
  });

  it('waves of 50 concurrent requests never spend past the budget; once it is spent, every request gets insufficient_quota', async () => {
    let served = 0;
    const settled = () => waitUntil(async () => (await counter()) === served * COST, 10_000, 'the counter to settle to the spend');
    for (let wave = 0; ; wave++) {
      expect(wave).toBeLessThan(30);
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => ask(i % 2 === 0 ? gateways[0]!.alice : gateways[1]!.bob)));
      const ok = results.filter((r) => r.status === 200).length;
      served += ok;
      expect(results.filter((r) => r.status !== 200).every((r) => r.status === 429 && r.code === 'insufficient_quota')).toBe(true);
      // What the upstream answered is what was spent: never past the budget, at any point.
      expect(served * COST).toBeLessThanOrEqual(BUDGET);
      expect(await counter()).toBeLessThanOrEqual(BUDGET);
      if (ok > 0) continue;
      // All refused. Units one replica holds unspent (its lease, its refunds) the other cannot use until they go back
      // at a sync: once the store holds exactly the spend, a wave refused in full means the budget is spent.
      const held = (await counter()) - served * COST;
      await settled();
      if (held === 0) break;
    }
    expect(upstream.requests).toHaveLength(served);
    // Refused only once less than one reservation was left.
    expect(served * COST).toBeGreaterThan(BUDGET - MAX_RESERVATION);
  }, 120_000);

  it('a price change saved to the manifest applies to the next request; the window keeps its spend', async () => {
    const before = await counter();
    expect(before).toBeGreaterThan(0);
    const served = upstream.requests.length;
    // Doubled prices and a raised budget in one save: the first request either gateway serves after it is priced anew.
    write('0.20', '{inputPerMTok: "200", outputPerMTok: "400"}');
    for (const g of gateways) await waitUntil(async () => (await ask(g.alice)).status === 200, 5000, 'the new manifest to apply');
    const more = upstream.requests.length - served;
    expect(more).toBe(2);
    await waitUntil(async () => (await counter()) === before + more * 2 * COST, 10_000, 'the counter to settle at the new price');
  }, 30_000);
});
