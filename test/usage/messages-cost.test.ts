// The cost of Messages API requests through @anthropic-ai/sdk, plain and streamed: on a native route, where
// Anthropic's input_tokens leaves out cache reads and writes and the writes are split by lifetime (5 minutes, 1 hour,
// priced apart), and on a translated route, where the chat backend's prompt_tokens includes its cached tokens. Each
// expected figure is written out from the upstream's report and the prices below (docs/usage-and-limits.md).
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicTurn, type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { ALICE_KEY, startGateway, type TestGateway } from '../helpers/gateway.js';

/** Anthropic's answer: 20 uncached, 100 read from the cache, 3,000 written (1,000 for 5 minutes, 2,000 for an hour). */
const turn: AnthropicTurn = {
  content: [{ type: 'text', text: 'Cached.' }],
  stop_reason: 'end_turn',
  // The fake sends usage as given; its type knows only the flat counts.
  usage: {
    input_tokens: 20,
    output_tokens: 7,
    cache_read_input_tokens: 100,
    cache_creation_input_tokens: 3_000,
    cache_creation: { ephemeral_5m_input_tokens: 1_000, ephemeral_1h_input_tokens: 2_000 },
  } as AnthropicTurn['usage'],
};
// 20 × 3.00 + 100 × 0.30 + 1,000 × 3.75 + 2,000 × 6.00 + 7 × 15.00 = 60 + 30 + 3,750 + 12,000 + 105 = 15,945 per million
const NATIVE_COST = '0.015945';
// The chat backend: 1,000 prompt tokens of which 600 cached, 50 completion tokens, at the same input and output prices:
// 400 × 3.00 + 600 × 0.30 + 50 × 15.00 = 1,200 + 180 + 750 = 2,130 per million
const TRANSLATED_COST = '0.00213';

const manifests = (anthropic: string, chat: string) => `
apiVersion: v1
kind: Secret
metadata: {name: upstreams}
stringData: {anthropic: sk-ant-upstream-abcdef, chat: sk-chat-upstream-abcdef}
---
apiVersion: v1
kind: Secret
metadata: {name: alice-key}
stringData: {token: ${ALICE_KEY}}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: claude-native}
spec:
  endpoints: [messages]
  backends:
  - name: anthropic
    api: anthropic
    baseURL: ${anthropic}
    auth: {header: {name: x-api-key, secretRef: {name: upstreams, key: anthropic}}}
    pricing: &claude {inputPerMTok: "3.00", cachedInputPerMTok: "0.30", cacheWritePerMTok: "3.75", cacheWrite1hPerMTok: "6.00", outputPerMTok: "15.00"}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: claude-translated}
spec:
  endpoints: [messages]
  backends:
  - name: vllm
    baseURL: ${chat}
    apiKeySecretRef: {name: upstreams, key: chat}
    pricing: {inputPerMTok: "3.00", cachedInputPerMTok: "0.30", outputPerMTok: "15.00"}
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: coders}
spec: {models: ["claude-*"]}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: alice}
spec: {group: coders, secretRef: {name: alice-key, key: token}}
`;

let anthropic: AnthropicUpstream;
let chat: ScriptedChatUpstream;
let gw: TestGateway;

beforeAll(async () => {
  anthropic = await startAnthropicUpstream([turn]);
  chat = await startScriptedChatUpstream([{ text: 'Cached.', finish: 'stop', usage: { prompt_tokens: 1_000, completion_tokens: 50, cached_tokens: 600 } }]);
  gw = await startGateway(manifests(anthropic.baseURL, chat.baseURL));
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([anthropic?.close(), chat?.close()]);
});

const claude = () => new Anthropic({ apiKey: ALICE_KEY, baseURL: gw.origin, maxRetries: 0, timeout: 10_000 });
const ask = { max_tokens: 100, messages: [{ role: 'user' as const, content: 'hello' }] };

const record = (reqId: string | null) => gw.record(reqId);

describe('the cost of a Messages request', () => {
  it('native: 1-hour cache writes at cacheWrite1hPerMTok, 5-minute ones at cacheWritePerMTok, plain and streamed', async () => {
    const plain = await claude()
      .messages.create({ model: 'claude-native', ...ask })
      .withResponse();
    const stream = claude().messages.stream({ model: 'claude-native', ...ask });
    await stream.finalMessage();
    const streamed = (await stream.withResponse()).response;
    for (const id of [plain.response.headers.get('x-request-id'), streamed.headers.get('x-request-id')]) {
      expect(await record(id)).toMatchObject({
        inputTokens: 3_120,
        cachedInputTokens: 100,
        cacheWriteInputTokens: 3_000,
        cacheWrite1hInputTokens: 2_000,
        outputTokens: 7,
        cost: NATIVE_COST,
        currency: 'USD',
        estimated: false,
      });
    }
  });

  it("translated: the chat backend's cached tokens are part of its prompt tokens, priced once at the cached price", async () => {
    const plain = await claude()
      .messages.create({ model: 'claude-translated', ...ask })
      .withResponse();
    expect(plain.data.usage).toMatchObject({ input_tokens: 400, cache_read_input_tokens: 600, output_tokens: 50 });
    const stream = claude().messages.stream({ model: 'claude-translated', ...ask });
    await stream.finalMessage();
    const streamed = (await stream.withResponse()).response;
    for (const id of [plain.response.headers.get('x-request-id'), streamed.headers.get('x-request-id')])
      expect(await record(id)).toMatchObject({ inputTokens: 1_000, cachedInputTokens: 600, outputTokens: 50, cost: TRANSLATED_COST });
  });
});
