// The cost of every request, across two replicas on one real Redis: a mixed workload (chat, streamed chat and
// Responses with cached and reasoning tokens, embeddings, an image, a transcription, an unpriced speech request, a
// client that leaves mid-stream). Each cost the usage record carries must equal, to the micro-unit, the cost this
// test computes itself from what the fake upstream reported and the prices below (written-out arithmetic, not the
// gateway's costOf); the metrics of both replicas and the spend in status.usage must add up to the same total.
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usageSnapshot } from '../../src/features/limits/usage-status.js';
import { startUsageUpstream, type UsageUpstream } from '../fakes/usage-upstream.js';
import { ALICE_KEY, startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import { waitUntil } from '../support/wait.js';

/** Prices as the manifests write them, here in micro-units per million tokens ("0.15" per MTok is 150,000 µ). */
const CHAT = { input: 150_000, cached: 75_000, output: 600_000 };
const EMBED = { input: 20_000 };
const IMAGE = { perImage: 167_000 }; // imagePer 1024x1024 high: "0.167" (token prices set too, not applied)
const WHISPER = { input: 2_500_000, output: 10_000_000 };

const manifests = (upstream: string) => {
  const route = (name: string, model: string, endpoints: string, pricing: string) => `
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: ${name}}
spec:
  model: ${model}
  endpoints: [${endpoints}]
  backends:
  - name: primary
    baseURL: ${upstream}
    apiKeySecretRef: {name: upstream-credentials, key: apiKey}
${pricing ? `    pricing: ${pricing}` : ''}
---`;
  return `
apiVersion: v1
kind: Secret
metadata: {name: upstream-credentials}
stringData: {apiKey: sk-upstream-secret-abcdef}
---
apiVersion: v1
kind: Secret
metadata: {name: alice-key}
stringData: {token: ${ALICE_KEY}}
---
${route('chat', 'gpt-4o-mini', 'chat.completions, responses', '{inputPerMTok: "0.15", cachedInputPerMTok: "0.075", outputPerMTok: "0.60"}')}
${route('embed', 'text-embedding-3-small', 'embeddings', '{inputPerMTok: "0.02"}')}
${route('image', 'gpt-image-1', 'images.generations', '{inputPerMTok: "5.00", outputPerMTok: "40.00", imagePer: [{size: "1024x1024", quality: "high", price: "0.167"}, {price: "0.011"}]}')}
${route('whisper', 'gpt-4o-transcribe', 'audio.transcriptions', '{inputPerMTok: "2.50", outputPerMTok: "10.00"}')}
${route('tts', 'tts-1', 'audio.speech', '')}
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: team-a}
spec:
  models: ["*"]
  limits: {costPerMonth: "2500.00"}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: alice}
spec: {group: team-a, secretRef: {name: alice-key, key: token}, limits: {costPerDay: "50"}}
`;
};

/** Micro-units of a sum of (tokens × µ per million) terms, rounded half up once: the documented rule. */
const rounded = (perMillion: number) => Math.floor((perMillion + 500_000) / 1_000_000);
/** Micro-units of a decimal string with at most six decimals. */
const micros = (text: unknown) => {
  const [whole, fraction = ''] = String(text).split('.');
  return Number(whole) * 1_000_000 + Number(fraction.padEnd(6, '0'));
};

let redis: TestRedis;
let upstream: UsageUpstream;
const gateways: TestGateway[] = [];

beforeAll(async () => {
  redis = await startRedis();
  upstream = await startUsageUpstream();
  // Two replicas counting spend in one Redis; the default read-on bound (10 s) for a client that leaves. allowUnpriced:
  // the unpriced speech request below is served under the money limits and recorded as of unknown cost. A store
  // deadline of 1 s, not the default 50 ms: on a loaded machine a call past 50 ms fails open (its spend uncounted)
  // or fails the test's own read of the spend, and the deadline is not what this file checks (redis-limits does).
  for (let i = 0; i < 2; i++)
    gateways.push(await startGateway(manifests(upstream.baseURL), { usageLimits: { redisUrl: redis.url, allowUnpriced: true, timeoutMs: 1_000 } }));
});
afterAll(async () => {
  for (const g of gateways) await g.close();
  await upstream?.close();
  await redis?.stop();
});

/** The usage record of a request, once written (by whichever replica served it). */
function record(reqId: string): Promise<Record<string, unknown>> {
  return waitUntil(() => gateways.flatMap((g) => g.logs).find((l) => l['msg'] === 'request' && l['reqId'] === reqId), 15_000, `the record of ${reqId}`);
}

/** What the test expects each request to cost, by request id, from the upstream's report alone. */
const expected = new Map<string, number>();

function expectCost(reqId: string, family: 'chat' | 'embed' | 'image' | 'whisper'): number {
  const u = upstream.reported.get(reqId);
  expect(u, `the upstream's report of ${reqId}`).toBeDefined();
  const uncached = u!.inputTokens - u!.cachedInputTokens;
  let cost: number;
  if (family === 'chat') cost = rounded(uncached * CHAT.input + u!.cachedInputTokens * CHAT.cached + u!.outputTokens * CHAT.output);
  else if (family === 'embed') cost = rounded(u!.inputTokens * EMBED.input);
  // One image (the fake answers one) at the 1024x1024 high price: priced per image, the tokens gpt-image-1 also
  // reports are not charged again (docs: a per-unit price, where set, is the price).
  else if (family === 'image') {
    expect(u!.outputTokens).toBeGreaterThan(0);
    cost = rounded(IMAGE.perImage * 1_000_000);
  } else cost = rounded(u!.inputTokens * WHISPER.input + u!.outputTokens * WHISPER.output);
  expected.set(reqId, cost);
  return cost;
}

async function checked(reqId: string, family: Parameters<typeof expectCost>[1]): Promise<Record<string, unknown>> {
  const r = await record(reqId);
  const cost = expectCost(reqId, family);
  expect(r).toMatchObject({ currency: 'USD', estimated: false });
  expect(r['costKnown']).toBeUndefined();
  expect(micros(r['cost']), `cost of ${reqId} (${family})`).toBe(cost);
  return r;
}

const idOf = (r: { response: Response }) => r.response.headers.get('x-request-id')!;

// Steps of one story, each building on the last: they run in this order even under --sequence.shuffle.
describe('the cost of every request, two replicas on one Redis', { shuffle: false }, () => {
  it('a client that leaves mid-stream: the stream is read on to its usage, the record has the exact usage and cost', async () => {
    const g = gateways[0]!;
    const controller = new AbortController();
    const { data, response } = await g
      .client()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'wait for it' }], stream: true }, { signal: controller.signal })
      .withResponse();
    const it = data[Symbol.asyncIterator]();
    await it.next();
    await it.next();
    controller.abort();
    // The gateway has seen the client leave once its connection is gone; only then does the upstream finish.
    await waitUntil(async () => (await g.connections()) === 0, 5_000, 'the client connection to close');
    upstream.release();
    const r = await checked(response.headers.get('x-request-id')!, 'chat');
    expect(r['aborted']).toBe(true);
    const reported = upstream.reported.get(String(r['reqId']))!;
    expect(r).toMatchObject({
      inputTokens: reported.inputTokens,
      outputTokens: reported.outputTokens,
      cachedInputTokens: reported.cachedInputTokens,
      reasoningTokens: reported.reasoningTokens,
    });
  });

  it('a mixed workload: each record costs what the reported usage and the prices make, to the micro-unit', async () => {
    const sent: Promise<void>[] = [];
    for (let i = 0; i < 24; i++) {
      const c: OpenAI = gateways[i % 2]!.client();
      const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: `question ${i}` }] };
      sent.push(
        (async () => {
          switch (i % 6) {
            case 0:
              await checked(idOf(await c.chat.completions.create(chat).withResponse()), 'chat');
              return;
            case 1: {
              const { data, response } = await c.chat.completions.create({ ...chat, stream: true }).withResponse();
              for await (const _ of data);
              await checked(response.headers.get('x-request-id')!, 'chat');
              return;
            }
            case 2: {
              const { data, response } = await c.responses.create({ model: 'gpt-4o-mini', input: `tell me ${i}`, stream: true }).withResponse();
              for await (const _ of data);
              await checked(response.headers.get('x-request-id')!, 'chat');
              return;
            }
            case 3:
              await checked(idOf(await c.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'] }).withResponse()), 'embed');
              return;
            case 4: {
              const r = await checked(
                idOf(await c.images.generate({ model: 'gpt-image-1', prompt: 'a fox', size: '1024x1024', quality: 'high' }).withResponse()),
                'image',
              );
              // The record holds what the image was priced by, for a warehouse to check the cost against the prices.
              expect(r).toMatchObject({ images: 1, imageSize: '1024x1024', imageQuality: 'high' });
              return;
            }
            default:
              await checked(
                idOf(await c.audio.transcriptions.create({ model: 'gpt-4o-transcribe', file: await toFile(Buffer.alloc(64, 1), 'a.mp3') }).withResponse()),
                'whisper',
              );
          }
        })(),
      );
    }
    await Promise.all(sent);
    // Cached and reasoning tokens were part of it (the fake reports some on most chat and Responses answers).
    const records = gateways.flatMap((g) => g.logs).filter((l) => l['msg'] === 'request' && expected.has(String(l['reqId'])));
    expect(records.some((r) => Number(r['cachedInputTokens']) > 0)).toBe(true);
    expect(records.some((r) => Number(r['reasoningTokens']) > 0)).toBe(true);
  });

  it('a request of unknown cost says so, never 0, and is counted apart', async () => {
    const s = await gateways[1]!.client().audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hello' });
    await s.arrayBuffer();
    const r = await record(s.headers.get('x-request-id')!);
    expect(r).toMatchObject({ costKnown: false, characters: 5 });
    expect(r['cost']).toBeUndefined();
    const unknown = await gateways[1]!.metrics.registry.getSingleMetric('model_gateway_cost_unknown_total')!.get();
    expect(unknown.values).toEqual([expect.objectContaining({ labels: { group: 'team-a', model: 'tts-1' }, value: 1 })]);
  });

  it("the metrics of both replicas and the spend in status.usage add up to the records' total", async () => {
    const total = [...expected.values()].reduce((a, b) => a + b, 0);
    expect(expected.size).toBe(25);
    let metric = 0;
    for (const g of gateways) {
      // Each replica's series is exactly the sum of the costs its records show (summed in micro-units).
      const recorded = new Map<string, number>();
      for (const l of g.logs.filter((l) => l['msg'] === 'request' && l['cost'] !== undefined)) {
        const series = `${l['group']}/${l['model']}`;
        recorded.set(series, (recorded.get(series) ?? 0) + micros(l['cost']));
      }
      const values = (await g.metrics.registry.getSingleMetric('model_gateway_cost_total')!.get()).values;
      expect(Object.fromEntries(values.map((v) => [`${v.labels['group']}/${v.labels['model']}`, v.value]))).toEqual(
        Object.fromEntries([...recorded].filter(([, m]) => m > 0).map(([series, m]) => [series, m / 1e6])),
      );
      for (const v of values) metric += v.value;
    }
    expect(metric).toBeCloseTo(total / 1e6, 9);
    // Spend reaches Redis with each replica's next sync (every second); either replica reads both replicas' spend.
    const spend = async () => {
      const usage = (await usageSnapshot(gateways[0]!.limits, gateways[0]!.tables.get())).objects;
      return Object.fromEntries(usage.map((u) => [u.kind, u.usage]));
    };
    const status = await waitUntil(
      async () => {
        const s = await spend();
        return micros(s['Group']?.costPerMonth?.used) === total && micros(s['GatewayToken']?.costPerDay?.used) === total ? s : undefined;
      },
      10_000,
      'the spend in status.usage',
    );
    expect(status['Group']).toMatchObject({ costPerMonth: { limit: '2500.00' }, costPerDay: {} });
    expect(status['Group']!.costPerDay!.limit).toBeUndefined();
    expect(status['GatewayToken']).toMatchObject({ costPerDay: { limit: '50.00' } });
  });
});
