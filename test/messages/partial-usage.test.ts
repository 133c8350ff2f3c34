// A native Messages stream that never ends after its client left: past the read-on bound the gateway cuts the upstream
// call, and the usage it records keeps what message_start had reported (the upstream's input and prompt-cache
// counts), with only the output estimated, rather than an estimate of the whole prompt. @anthropic-ai/sdk is the client.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { KEYS, messagesManifests } from './manifests.js';
import { QUESTION } from './weather-conversation.js';

let anthropic: AnthropicUpstream;
let gw: TestGateway;

beforeAll(async () => {
  anthropic = await startAnthropicUpstream([
    {
      content: [{ type: 'text', text: 'It is sunny, and it will stay so for the whole week.' }],
      stop_reason: 'end_turn',
      hang: true,
      usage: { input_tokens: 12, output_tokens: 30, cache_read_input_tokens: 9000, cache_creation_input_tokens: 300 },
    },
  ]);
  gw = await startGateway(messagesManifests({ anthropic: anthropic.baseURL, chat: anthropic.baseURL }), { usage: { readOn: { ms: 200, bytes: 1 << 20 } } });
});

afterAll(async () => {
  await gw?.close();
  await anthropic?.close();
});

describe('a native stream its client left, cut at the read-on bound', () => {
  it("records message_start's input and cache counts, the output estimated, marked estimated and aborted", async () => {
    const client = new Anthropic({ apiKey: KEYS.alice, baseURL: gw.origin, maxRetries: 0 });
    const ac = new AbortController();
    const { data: stream, response } = await client.messages
      .create({ model: 'claude-native', max_tokens: 256, messages: [QUESTION], stream: true }, { signal: ac.signal })
      .withResponse();
    for await (const event of stream) if (event.type === 'content_block_delta') break; // leaves after the first text
    ac.abort();
    const line = await gw.record(response.headers.get('x-request-id'));
    expect(line).toMatchObject({ aborted: true, estimated: true, inputTokens: 9312, cachedInputTokens: 9000, cacheWriteInputTokens: 300 });
    expect(line['outputTokens']).toBeGreaterThan(0);
  });
});
