// Over 1,000 mixed requests (every family, JSON and streams, clients leaving mid-stream), the usage records and
// the metrics add up to exactly what the fake upstream reported: no request lost, none counted twice, and the
// estimates (only where the upstream never reported) marked as such.
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startUsageUpstream, type UsageUpstream } from '../fakes/usage-upstream.js';
import { standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitUntil } from '../support/wait.js';

const REQUESTS = 1_000;
const CONCURRENCY = 16;

let upstream: UsageUpstream;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startUsageUpstream();
  // The hanging streams never send their usage: a short read-on bound estimates them soon after their clients left.
  gw = await startGateway(standardManifests(upstream.baseURL), { usage: { readOn: { ms: 300, bytes: 1024 * 1024 } } });
  client = gw.client();
});

afterAll(async () => {
  await gw.close();
  await upstream.close();
});

/** Reads a stream to its end, or leaves it after two events when `leave` is set; returns the request id. */
async function drain(call: Promise<{ data: AsyncIterable<unknown>; response: Response }>, controller?: AbortController): Promise<string> {
  const { data, response } = await call;
  const it = data[Symbol.asyncIterator]();
  if (controller) {
    await it.next();
    await it.next();
    controller.abort();
  } else while (!(await it.next()).done);
  return response.headers.get('x-request-id')!;
}

const file = async (name: string) => toFile(Buffer.alloc(256, 3), name);
const idOf = (r: { response: Response }) => r.response.headers.get('x-request-id')!;
const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hello' }] };

/** Request i of the mix: which family and shape, deterministic. */
async function request(i: number): Promise<{ id: string; left: boolean }> {
  const leave = new AbortController();
  switch (i % 16) {
    case 0:
    case 1:
      return { id: idOf(await client.chat.completions.create(chat).withResponse()), left: false };
    case 2:
    case 3:
      return { id: await drain(client.chat.completions.create({ ...chat, stream: true }).withResponse()), left: false };
    case 4:
      return {
        id: await drain(client.chat.completions.create({ ...chat, stream: true, stream_options: { include_usage: true } }).withResponse()),
        left: false,
      };
    case 5:
      return {
        id: await drain(
          client.chat.completions
            .create({ ...chat, messages: [{ role: 'user', content: `hang ${i}` }], stream: true }, { signal: leave.signal })
            .withResponse(),
          leave,
        ),
        left: true,
      };
    case 6:
      return { id: idOf(await client.responses.create({ model: 'gpt-4o-mini', input: `question ${i}` }).withResponse()), left: false };
    case 7:
      return { id: await drain(client.responses.create({ model: 'gpt-4o-mini', input: 'tell me', stream: true }).withResponse()), left: false };
    case 8:
      return {
        id: await drain(client.responses.create({ model: 'gpt-4o-mini', input: `hang ${i}`, stream: true }, { signal: leave.signal }).withResponse(), leave),
        left: true,
      };
    case 9:
      return { id: idOf(await client.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'] }).withResponse()), left: false };
    case 10:
      return { id: idOf(await client.images.generate({ model: 'org/image-model', prompt: 'a fox' }).withResponse()), left: false };
    case 11:
      return { id: idOf(await client.images.edit({ model: 'org/image-model', prompt: 'a fox', image: await file('a.png') }).withResponse()), left: false };
    case 12:
      return { id: idOf(await client.audio.transcriptions.create({ model: 'whisper-1', file: await file('a.mp3') }).withResponse()), left: false };
    case 13:
      return {
        id: idOf(await client.audio.translations.create({ model: 'whisper-1', file: await file('a.mp3'), response_format: 'verbose_json' }).withResponse()),
        left: false,
      };
    case 14: {
      const speech = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: `line ${i}` });
      await speech.arrayBuffer();
      return { id: speech.headers.get('x-request-id')!, left: false };
    }
    default:
      return { id: idOf(await client.videos.create({ model: 'sora-2', prompt: 'waves', seconds: '4' }).withResponse()), left: false };
  }
}

const TYPES = { inputTokens: 'input', outputTokens: 'output', cachedInputTokens: 'cached_input', reasoningTokens: 'reasoning' } as const;

it(`${REQUESTS} mixed requests: records and metrics add up to what the upstream reported, none lost or counted twice`, async () => {
  const sent: { id: string; left: boolean }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) sent.push(await request(next++));
    }),
  );
  expect(sent).toHaveLength(REQUESTS);
  expect(new Set(sent.map((s) => s.id)).size).toBe(REQUESTS);

  const records = await waitUntil(
    () => {
      const all = gw.logs.filter((l) => l['msg'] === 'request');
      return all.length >= REQUESTS ? all : undefined;
    },
    10_000,
    `${REQUESTS} usage records`,
  );
  // One record per request, no more.
  expect(records).toHaveLength(REQUESTS);
  const byId = new Map(records.map((r) => [String(r['reqId']), r]));
  expect(byId.size).toBe(REQUESTS);

  const exact = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0 };
  const estimated = { ...exact };
  let left = 0;
  for (const s of sent) {
    const r = byId.get(s.id)!;
    expect(r, s.id).toBeDefined();
    const reported = upstream.reported.get(s.id);
    if (s.left) {
      left++;
      expect(reported).toBeUndefined();
      expect(r['estimated']).toBe(true);
      expect(r['inputTokens']).toBeGreaterThan(0);
      for (const k of Object.keys(TYPES) as (keyof typeof TYPES)[]) estimated[k] += r[k] as number;
      continue;
    }
    expect(r['estimated'], s.id).toBe(false);
    expect({
      inputTokens: r['inputTokens'],
      outputTokens: r['outputTokens'],
      cachedInputTokens: r['cachedInputTokens'],
      reasoningTokens: r['reasoningTokens'],
      ...(r['seconds'] !== undefined ? { seconds: r['seconds'] } : {}),
    }).toEqual(reported);
    for (const k of Object.keys(TYPES) as (keyof typeof TYPES)[]) exact[k] += reported![k];
  }
  expect(left).toBe((REQUESTS / 16) * 2);

  // The counter by type and estimated: exactly the reported sums, and the estimates apart.
  const counter = await gw.metrics.registry.getSingleMetric('model_gateway_tokens_total')!.get();
  const sum = (type: string, est: string) =>
    counter.values.filter((v) => v.labels['type'] === type && v.labels['estimated'] === est).reduce((n, v) => n + v.value, 0);
  for (const [k, type] of Object.entries(TYPES) as [keyof typeof TYPES, string][]) {
    expect(sum(type, 'false'), type).toBe(exact[k]);
    expect(sum(type, 'true'), type).toBe(estimated[k]);
  }
  // gen_ai_client_token_usage: the upstream's own counts only.
  const histogram = await gw.metrics.registry.getSingleMetric('gen_ai_client_token_usage')!.get();
  const histogramSum = (type: string) =>
    histogram.values
      .filter((v) => (v as { metricName?: string }).metricName === 'gen_ai_client_token_usage_sum' && v.labels['type'] === type)
      .reduce((n, v) => n + v.value, 0);
  expect(histogramSum('input')).toBe(exact.inputTokens);
  expect(histogramSum('output')).toBe(exact.outputTokens);
}, 120_000);
