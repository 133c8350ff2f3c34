// The per-call fees of tools the upstream runs itself: Anthropic's usage.server_tool_use (through @anthropic-ai/sdk)
// and a Responses answer's web_search_call and file_search_call items (through the openai SDK), plain and streamed.
// Priced at webSearchPerCall and fileSearchPerCall on top of the tokens (a web fetch costs its tokens alone); a backend without those
// prices records the cost as unknown, never the tokens' figure alone. Expected figures are written out beside them.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicTurn, type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { type RecordingServer, startRecordingServer } from '../fakes/recording-json-server.js';
import { type ScriptedResponsesUpstream, type ScriptedTurn, startScriptedResponsesUpstream } from '../fakes/scripted-responses-upstream.js';
import { ALICE_KEY, startGateway, type TestGateway } from '../helpers/gateway.js';

/** Two web searches and one fetch, Anthropic's way. */
const searched: AnthropicTurn = {
  content: [{ type: 'text', text: 'Found it.' }],
  stop_reason: 'end_turn',
  // The fake sends usage as given; its type knows only the flat counts.
  usage: {
    input_tokens: 1_000,
    output_tokens: 100,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
    server_tool_use: { web_search_requests: 2, web_fetch_requests: 1 },
  } as AnthropicTurn['usage'],
};
// 1,000 × 3.00 + 100 × 15.00 = 4,500 per million = 0.0045, + 2 searches × 0.01 (the fetch: its tokens only) = 0.0245
const CLAUDE_COST = '0.0245';

/** Two web searches and a file search, OpenAI's way: output items before the answer. */
const responsesTurn: ScriptedTurn = {
  output: [
    { type: 'web_search_call', query: 'weather paris' },
    { type: 'web_search_call', query: 'weather paris tomorrow' },
    { type: 'file_search_call', query: 'umbrella policy' },
    { type: 'message', text: 'Rain: take the "web_search_call" umbrella.' },
  ],
  usage: { inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 100, reasoningTokens: 0 },
};
// 1,000 × 2.00 + 100 × 8.00 = 2,800 per million = 0.0028, + 2 searches × 0.025 + 1 file search × 0.0025 = 0.0553
const GPT_COST = '0.0553';

const manifests = (anthropic: string, responses: string, silent: string) => `
apiVersion: v1
kind: Secret
metadata: {name: upstreams}
stringData: {anthropic: sk-ant-upstream-abcdef, openai: sk-openai-upstream-abcdef}
---
apiVersion: v1
kind: Secret
metadata: {name: alice-key}
stringData: {token: ${ALICE_KEY}}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: claude-priced}
spec:
  endpoints: [messages]
  backends:
  - name: anthropic
    api: anthropic
    baseURL: ${anthropic}
    auth: {header: {name: x-api-key, secretRef: {name: upstreams, key: anthropic}}}
    pricing: {inputPerMTok: "3.00", outputPerMTok: "15.00", webSearchPerCall: "0.01"}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: claude-tokens-only}
spec:
  endpoints: [messages]
  backends:
  - name: anthropic
    api: anthropic
    baseURL: ${anthropic}
    auth: {header: {name: x-api-key, secretRef: {name: upstreams, key: anthropic}}}
    pricing: {inputPerMTok: "3.00", outputPerMTok: "15.00"}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: gpt-priced}
spec:
  endpoints: [responses]
  backends:
  - name: openai
    baseURL: ${responses}
    apiKeySecretRef: {name: upstreams, key: openai}
    pricing: {inputPerMTok: "2.00", outputPerMTok: "8.00", webSearchPerCall: "0.025", fileSearchPerCall: "0.0025"}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: gpt-tokens-only}
spec:
  endpoints: [responses]
  backends:
  - name: openai
    baseURL: ${responses}
    apiKeySecretRef: {name: upstreams, key: openai}
    pricing: {inputPerMTok: "2.00", outputPerMTok: "8.00"}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: gpt-no-usage}
spec:
  endpoints: [responses]
  backends:
  - name: openai
    baseURL: ${silent}
    apiKeySecretRef: {name: upstreams, key: openai}
    pricing: {inputPerMTok: "2.00", outputPerMTok: "8.00", webSearchPerCall: "0.025", fileSearchPerCall: "0.0025"}
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: researchers}
spec: {models: ["claude-*", "gpt-*"]}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: alice}
spec: {group: researchers, secretRef: {name: alice-key, key: token}}
`;

let anthropic: AnthropicUpstream;
let responses: ScriptedResponsesUpstream;
/** Answers a Responses request with a web search and no usage, as an upstream that omits it. */
let silent: RecordingServer;
let gw: TestGateway;

beforeAll(async () => {
  anthropic = await startAnthropicUpstream([searched]);
  responses = await startScriptedResponsesUpstream(Array.from({ length: 8 }, () => responsesTurn));
  silent = await startRecordingServer((_req, res) => {
    const output = [{ type: 'web_search_call', id: 'ws_0', status: 'completed', action: { type: 'search', query: 'q' } }];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'resp_1', object: 'response', created_at: 1_700_000_000, status: 'completed', model: 'm', output }));
  });
  gw = await startGateway(manifests(anthropic.baseURL, responses.baseURL, silent.baseURL));
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([anthropic?.close(), responses?.close(), silent?.close()]);
});

const claude = () => new Anthropic({ apiKey: ALICE_KEY, baseURL: gw.origin, maxRetries: 0, timeout: 10_000 });
const webSearch = { type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 5 };
const claudeAsk = { max_tokens: 200, messages: [{ role: 'user' as const, content: 'weather in Paris?' }], tools: [webSearch] };

/** A Messages request plain and streamed: the records of both. */
async function claudeRecords(model: string): Promise<Record<string, unknown>[]> {
  const plain = await claude()
    .messages.create({ model, ...claudeAsk })
    .withResponse();
  const stream = claude().messages.stream({ model, ...claudeAsk });
  await stream.finalMessage();
  const streamed = (await stream.withResponse()).response;
  return Promise.all([plain.response.headers.get('x-request-id'), streamed.headers.get('x-request-id')].map((id) => gw.record(id)));
}

/** A Responses request with web and file search, plain and streamed: the records of both. */
async function gptRecords(model: string): Promise<Record<string, unknown>[]> {
  const ask = {
    model,
    input: 'Will it rain in Paris, and what is our umbrella policy?',
    tools: [{ type: 'web_search' as const }, { type: 'file_search' as const, vector_store_ids: ['vs_1'] }],
  };
  const plain = await gw.client().responses.create(ask).withResponse();
  expect(plain.data.output.map((o) => o.type)).toEqual(['web_search_call', 'web_search_call', 'file_search_call', 'message']);
  const streamed = await gw
    .client()
    .responses.create({ ...ask, stream: true })
    .withResponse();
  const searches: string[] = [];
  for await (const e of streamed.data) if (e.type === 'response.web_search_call.completed') searches.push(e.item_id);
  expect(searches).toEqual(['ws_0', 'ws_1']);
  const ids = [plain.response.headers.get('x-request-id'), streamed.response.headers.get('x-request-id')];
  return Promise.all(ids.map((id) => gw.record(id)));
}

describe('server-side tool calls', () => {
  it('Anthropic: usage.server_tool_use priced per search on top of the tokens; the fetch is logged and costs its tokens alone', async () => {
    for (const r of await claudeRecords('claude-priced'))
      expect(r).toMatchObject({ inputTokens: 1_000, outputTokens: 100, webSearchCalls: 2, webFetchCalls: 1, cost: CLAUDE_COST, estimated: false });
  });

  it('Anthropic: without webSearchPerCall the cost is unknown, not the tokens alone', async () => {
    for (const r of await claudeRecords('claude-tokens-only')) {
      expect(r).toMatchObject({ webSearchCalls: 2, webFetchCalls: 1, costKnown: false });
      expect(r).not.toHaveProperty('cost');
    }
  });

  it('Responses: each web_search_call and file_search_call item priced once (not again for its stream events)', async () => {
    for (const r of await gptRecords('gpt-priced'))
      expect(r).toMatchObject({ inputTokens: 1_000, outputTokens: 100, webSearchCalls: 2, fileSearchCalls: 1, cost: GPT_COST, estimated: false });
  });

  it('Responses: without the search prices the cost is unknown', async () => {
    for (const r of await gptRecords('gpt-tokens-only')) {
      expect(r).toMatchObject({ webSearchCalls: 2, fileSearchCalls: 1, costKnown: false });
      expect(r).not.toHaveProperty('cost');
    }
  });

  it('an estimated usage of a request with such tools has an unknown cost: the searches it made are in no estimate', async () => {
    const plain = await gw
      .client()
      .responses.create({ model: 'gpt-no-usage', input: 'search', tools: [{ type: 'web_search' }] })
      .withResponse();
    const r = await gw.record(plain.response.headers.get('x-request-id'));
    expect(r).toMatchObject({ estimated: true, serverToolCallsUncounted: true, costKnown: false });
    expect(r).not.toHaveProperty('cost');
  });

  it('a request without server-side tools is priced by its tokens, its answer not searched', async () => {
    const plain = await gw.client().responses.create({ model: 'gpt-priced', input: 'hello' }).withResponse();
    const r = await gw.record(plain.response.headers.get('x-request-id'));
    // The fake answers with the same items, but a request that enabled no such tool cannot have run one.
    expect(r).toMatchObject({ cost: '0.0028' });
    expect(r).not.toHaveProperty('webSearchCalls');
  });
});
