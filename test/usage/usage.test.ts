// Usage through the real HTTP stack: the openai SDK as client, a fake upstream that reports usage per request
// and remembers what it reported. Each request's access line is its usage record.
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUsageUpstream, type UsageUpstream } from '../fakes/usage-upstream.js';
import { standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitUntil } from '../support/wait.js';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { approximateTokens } from '../../src/features/usage/token-count.js';

let upstream: UsageUpstream;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startUsageUpstream();
  // A short read-on bound: the hanging streams below never send their usage, and are estimated once it passes.
  gw = await startGateway(standardManifests(upstream.baseURL), { usageMetrics: { perToken: true }, usage: { readOn: { ms: 300, bytes: 1024 * 1024 } } });
  client = gw.client();
});

afterAll(async () => {
  await gw.close();
  await upstream.close();
});

const record = (reqId: string | null) => gw.record(reqId);

/** What the record says was used, in the upstream's terms. */
const counts = (r: Record<string, unknown>) => ({
  inputTokens: r['inputTokens'],
  outputTokens: r['outputTokens'],
  cachedInputTokens: r['cachedInputTokens'],
  reasoningTokens: r['reasoningTokens'],
  ...(r['seconds'] !== undefined ? { seconds: r['seconds'] } : {}),
});

async function exact(reqId: string | null): Promise<Record<string, unknown>> {
  expect(reqId).toBeTruthy();
  const r = await record(reqId!);
  expect(r['estimated']).toBe(false);
  expect(counts(r)).toEqual(upstream.reported.get(reqId!));
  return r;
}

describe('the usage record of each family', () => {
  it('chat: the record has the schema a warehouse loads, the token by namespace/name, never its key', async () => {
    const { response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    const r = await exact(response.headers.get('x-request-id'));
    expect(r).toMatchObject({ status: 200, family: 'chat.completions', model: 'gpt-4o-mini', group: 'team-a', backend: 'primary', tokenRef: 'default/alice' });
    expect(typeof r['durationMs']).toBe('number');
    expect(gw.logText()).not.toContain('sk-alice');
  });

  it('a chat stream the client did not ask usage of: the upstream is asked, the client sees no usage chunk, the count is exact', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_obfuscation: false } })
      .withResponse();
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(2);
    // No usage-only chunk, and no "usage": null (which the upstream put on every chunk once asked for usage).
    expect(chunks.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
    const id = response.headers.get('x-request-id')!;
    expect(upstream.bodies.get(id)?.['stream_options']).toEqual({ include_obfuscation: false, include_usage: true });
    await exact(id);
  });

  it('a chat stream that asked for usage gets its usage chunk, and the same count is recorded', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } })
      .withResponse();
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const c of stream) if (c.usage) usage = c.usage;
    const r = await exact(response.headers.get('x-request-id'));
    expect(usage?.prompt_tokens).toBe(r['inputTokens']);
    expect(usage?.completion_tokens_details?.reasoning_tokens).toBe(r['reasoningTokens']);
  });

  it('responses, JSON and streamed (from response.completed), with cached and reasoning tokens', async () => {
    const json = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi' }).withResponse();
    await exact(json.response.headers.get('x-request-id'));
    const streamed = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi', stream: true }).withResponse();
    for await (const _ of streamed.data);
    const r = await exact(streamed.response.headers.get('x-request-id'));
    expect(r['cachedInputTokens']).toBe(upstream.reported.get(String(r['reqId']))!.cachedInputTokens);
  });

  it('embeddings, images and transcriptions from their usage objects', async () => {
    const e = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'abc' }).withResponse();
    await exact(e.response.headers.get('x-request-id'));
    const g = await client.images.generate({ model: 'org/image-model', prompt: 'a fox' }).withResponse();
    await exact(g.response.headers.get('x-request-id'));
    const edit = await client.images
      .edit({ model: 'org/image-model', prompt: 'a fox', image: await toFile(Buffer.alloc(64, 1), 'a.png', { type: 'image/png' }) })
      .withResponse();
    await exact(edit.response.headers.get('x-request-id'));
    const t = await client.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(Buffer.alloc(64, 2), 'a.mp3') }).withResponse();
    await exact(t.response.headers.get('x-request-id'));
  });

  it('translations in seconds (verbose duration), speech in input characters, videos in seconds', async () => {
    const t = await client.audio.translations
      .create({ model: 'whisper-1', file: await toFile(Buffer.alloc(64, 2), 'a.mp3'), response_format: 'verbose_json' })
      .withResponse();
    const tr = await exact(t.response.headers.get('x-request-id'));
    expect(tr['seconds']).toBeGreaterThan(0);
    // A long audio's verbose answer: its duration comes first, long before the end of its segments.
    const long = await client.audio.translations
      .create({ model: 'whisper-1', file: await toFile(Buffer.alloc(64, 2), 'a.mp3'), response_format: 'verbose_json', prompt: 'long' })
      .withResponse();
    expect(JSON.stringify(long.data).length).toBeGreaterThan(100_000);
    await exact(long.response.headers.get('x-request-id'));
    const s = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Héllo wörld 👋' });
    await s.arrayBuffer();
    const sr = await record(s.headers.get('x-request-id')!);
    expect(sr).toMatchObject({ characters: 13, inputTokens: 0, outputTokens: 0, estimated: false });
    const v = await client.videos.create({ model: 'sora-2', prompt: 'waves', seconds: '8' }).withResponse();
    const vr = await exact(v.response.headers.get('x-request-id'));
    expect(vr['seconds']).toBe(8);
  });
});

/** Starts a stream, leaves it after two events, and returns the request's usage record. */
async function leftAfterTwoEvents(
  start: (signal: AbortSignal) => Promise<{ data: AsyncIterable<unknown>; response: Response }>,
): Promise<Record<string, unknown>> {
  const controller = new AbortController();
  const { data, response } = await start(controller.signal);
  const it = data[Symbol.asyncIterator]();
  await it.next();
  await it.next();
  controller.abort();
  return record(response.headers.get('x-request-id')!);
}

describe('estimates, when the upstream said nothing within the read-on bound', () => {
  // What the gateway counts (an approximation of o200k_base), checked against the exact count too.
  const count = (text: string) => approximateTokens(text);
  const near = (n: unknown, text: string) => Math.abs((n as number) - countTokens(text)) <= Math.max(2, 0.25 * countTokens(text));

  it('a client that leaves a chat stream mid-way: the prompt and what was streamed, estimated', async () => {
    const prompt = 'please hang for a while, then tell me a long story';
    const r = await leftAfterTwoEvents((signal) =>
      client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }], stream: true }, { signal }).withResponse(),
    );
    expect(r).toMatchObject({
      estimated: true,
      aborted: true,
      inputTokens: count(prompt) + 6,
      outputTokens: count('Hello there, how are you today?'),
    });
    expect(near(r['outputTokens'], 'Hello there, how are you today?')).toBe(true);
    expect(upstream.reported.has(String(r['reqId']))).toBe(false);
  });

  it('a whole chat stream from an upstream that ignores stream_options: estimated, and marked so', async () => {
    const prompt = 'answer with no usage please';
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }], stream: true }).withResponse();
    let text = '';
    for await (const c of stream.data) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello there, how are you today?');
    const r = await record(stream.response.headers.get('x-request-id')!);
    expect(r).toMatchObject({ estimated: true, inputTokens: count(prompt) + 6, outputTokens: count(text) });
    expect(r['aborted']).not.toBe(true);
    expect(near(r['outputTokens'], text)).toBe(true);
  });

  it('a Responses stream cut the same way', async () => {
    const r = await leftAfterTwoEvents((signal) =>
      client.responses.create({ model: 'gpt-4o-mini', input: 'hang on', stream: true }, { signal }).withResponse(),
    );
    expect(r).toMatchObject({ estimated: true, inputTokens: count('hang on'), outputTokens: count('Hi there, friend') });
    expect(near(r['inputTokens'], 'hang on') && near(r['outputTokens'], 'Hi there, friend')).toBe(true);
  });
});

describe('usage metrics', () => {
  const value = async (name: string, labels: Record<string, string>) => {
    const metric = await gw.metrics.registry.getSingleMetric(name)?.get();
    return metric?.values.filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l)).reduce((n, v) => n + v.value, 0) ?? 0;
  };

  it('tokens by group, model, type and estimated; per token behind the opt-in this gateway has', async () => {
    const before = await value('model_gateway_tokens_total', { group: 'team-a', model: 'text-embedding-3-small', type: 'input', estimated: 'false' });
    const perToken = await value('model_gateway_token_tokens_total', { token: 'default/alice', model: 'text-embedding-3-small', type: 'input' });
    const e = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'abc' }).withResponse();
    const used = (await exact(e.response.headers.get('x-request-id')))['inputTokens'] as number;
    expect(await value('model_gateway_tokens_total', { group: 'team-a', model: 'text-embedding-3-small', type: 'input', estimated: 'false' })).toBe(
      before + used,
    );
    expect(await value('model_gateway_token_tokens_total', { token: 'default/alice', model: 'text-embedding-3-small', type: 'input' })).toBe(perToken + used);
  });

  it('no per-token series without the opt-in', async () => {
    const plain = await startGateway(standardManifests(upstream.baseURL));
    try {
      await plain.client().embeddings.create({ model: 'text-embedding-3-small', input: 'abc' });
      await waitUntil(async () => (await plain.metrics.registry.metrics()).includes('model_gateway_tokens_total{'), 5_000, 'the tokens counter');
      expect(await plain.metrics.registry.metrics()).not.toContain('model_gateway_token_tokens_total');
    } finally {
      await plain.close();
    }
  });
});
