// @anthropic-ai/sdk, the official client, against the gateway's Messages API through the real HTTP stack: the same
// battery for a route whose backend speaks the Messages API (native: the body passes through with the model renamed)
// and for one whose backend speaks chat completions (translated both ways). The SDK assembles what the gateway sends
// (its stream helpers build the final message from the events), and its error classes judge the gateway's refusals.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicUpstream, countedTokens, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitUntil } from '../support/wait.js';
import { KEYS, messagesManifests } from './manifests.js';
import { anthropicTurns, chatTurns, QUESTION, TOOL } from './weather-conversation.js';

let anthropic: AnthropicUpstream;
let chat: ScriptedChatUpstream;
let cutAnthropic: AnthropicUpstream;
let cutChat: ScriptedChatUpstream;
let gw: TestGateway;

const client = (apiKey: string = KEYS.alice, options: { authToken?: boolean } = {}) =>
  new Anthropic({
    ...(options.authToken ? { authToken: apiKey, apiKey: null } : { apiKey }),
    baseURL: gw.origin,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'anthropic-beta': 'test-beta-2026' },
  });

beforeAll(async () => {
  anthropic = await startAnthropicUpstream(anthropicTurns);
  chat = await startScriptedChatUpstream(chatTurns);
  cutAnthropic = await startAnthropicUpstream([{ ...anthropicTurns[1]!, cut: true }]);
  cutChat = await startScriptedChatUpstream([{ ...chatTurns[1]!, cut: true }]);
  gw = await startGateway(
    messagesManifests({
      anthropic: anthropic.baseURL,
      chat: chat.baseURL,
      dead: await deadBaseURL(),
      extra: { 'claude-x-cut-native': ['anthropic', cutAnthropic.baseURL], 'claude-x-cut-translated': ['openai', cutChat.baseURL] },
    }),
  );
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([anthropic, chat, cutAnthropic, cutChat].map((u) => u?.close()));
});

/** The access line of the request the upstream saw with this x-request-id. */
async function accessLine(reqId: unknown): Promise<Record<string, unknown>> {
  return waitUntil(() => gw.logs.find((l) => l['msg'] === 'request' && l['reqId'] === reqId), 5_000, `the access line of ${String(reqId)}`);
}

interface Kind {
  readonly name: string;
  readonly model: string;
  /** The Messages answer the SDK should assemble for turn i. */
  readonly expected: (i: number) => { content: unknown[]; stop_reason: string; usage: Record<string, number> };
  /** The gateway's recorded usage for turn i: the upstream's report. */
  readonly recorded: (i: number) => Record<string, unknown>;
  readonly upstreamRequests: () => { path: string; headers: Record<string, unknown>; body: Record<string, any> | undefined }[];
}

const native: Kind = {
  name: 'native (a backend with api: anthropic)',
  model: 'claude-native',
  expected: (i) => ({ content: anthropicTurns[i]!.content, stop_reason: anthropicTurns[i]!.stop_reason, usage: { ...anthropicTurns[i]!.usage } }),
  recorded: (i) => {
    const u = anthropicTurns[i]!.usage;
    return {
      inputTokens: u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
      cachedInputTokens: u.cache_read_input_tokens,
      cacheWriteInputTokens: u.cache_creation_input_tokens,
      outputTokens: u.output_tokens,
      estimated: false,
    };
  },
  upstreamRequests: () => anthropic.requests as never,
};

const translated: Kind = {
  name: 'translated (a chat completions backend)',
  model: 'claude-translated',
  expected: (i) => {
    const t = chatTurns[i]!;
    const content: unknown[] = [{ type: 'text', text: t.text }];
    for (const c of t.toolCalls ?? []) content.push({ type: 'tool_use', id: c.id, name: c.name, input: JSON.parse(c.arguments) });
    const u = t.usage;
    return {
      content,
      stop_reason: t.toolCalls ? 'tool_use' : 'end_turn',
      usage: {
        input_tokens: u.prompt_tokens - u.cached_tokens,
        cache_read_input_tokens: u.cached_tokens,
        cache_creation_input_tokens: 0,
        output_tokens: u.completion_tokens,
      },
    };
  },
  recorded: (i) => {
    const u = chatTurns[i]!.usage;
    return { inputTokens: u.prompt_tokens, cachedInputTokens: u.cached_tokens, outputTokens: u.completion_tokens, estimated: false };
  },
  upstreamRequests: () => chat.requests as never,
};

describe.each([native, translated])('the Messages API through the gateway, $name', (kind) => {
  it('create: the answer, its stop reason and its usage, and the upstream saw the backend key, never the client key', async () => {
    const before = kind.upstreamRequests().length;
    const message = await client().messages.create({ model: kind.model, max_tokens: 1024, messages: [QUESTION], tools: [TOOL] });
    expect(message).toMatchObject({ type: 'message', role: 'assistant', ...kind.expected(0) });
    const seen = kind.upstreamRequests().slice(before);
    expect(seen).toHaveLength(1);
    const [sent] = seen;
    expect(JSON.stringify(sent!.headers)).not.toContain(KEYS.alice);
    if (kind === native) {
      expect(sent!.path).toBe('/v1/messages');
      expect(sent!.headers['x-api-key']).toBe(KEYS.anthropicUpstream);
      expect(sent!.headers['anthropic-version']).toEqual(expect.any(String));
      expect(sent!.headers['anthropic-beta']).toBe('test-beta-2026');
    } else {
      expect(sent!.path).toBe('/v1/chat/completions');
      expect(sent!.headers['authorization']).toBe(`Bearer ${KEYS.chatUpstream}`);
      expect(sent!.body).toMatchObject({ model: 'upstream-chat-model', max_tokens: 1024, messages: [{ role: 'user', content: QUESTION.content }] });
      expect(message.model).toBe(kind.model);
    }
    expect(await accessLine(sent!.headers['x-request-id'])).toMatchObject({ status: 200, family: 'messages', model: kind.model, ...kind.recorded(0) });
  });

  it('stream: the SDK assembles the same message from the events, and the usage recorded is the upstream report', async () => {
    const before = kind.upstreamRequests().length;
    const stream = client().messages.stream({ model: kind.model, max_tokens: 1024, messages: [QUESTION], tools: [TOOL] });
    const message = await stream.finalMessage();
    expect(message).toMatchObject(kind.expected(0));
    const [sent] = kind.upstreamRequests().slice(before);
    expect(sent!.body).toMatchObject({ stream: true });
    expect(await accessLine(sent!.headers['x-request-id'])).toMatchObject({ status: 200, family: 'messages', ...kind.recorded(0) });
  });

  it('tools: a tool_result turn after the tool_use gets the final answer', async () => {
    const first = await client().messages.create({ model: kind.model, max_tokens: 1024, messages: [QUESTION], tools: [TOOL] });
    const use = first.content.find((b) => b.type === 'tool_use')!;
    const before = kind.upstreamRequests().length;
    const second = await client()
      .messages.stream({
        model: kind.model,
        max_tokens: 1024,
        tools: [TOOL],
        messages: [
          QUESTION,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '22°C, sunny' }] },
        ],
      })
      .finalMessage();
    expect(second).toMatchObject(kind.expected(1));
    const [sent] = kind.upstreamRequests().slice(before);
    if (kind === native) expect(sent!.body!['messages'][2].content[0]).toEqual({ type: 'tool_result', tool_use_id: use.id, content: '22°C, sunny' });
    else expect(sent!.body!['messages']).toContainEqual({ role: 'tool', tool_call_id: use.id, content: '22°C, sunny' });
  });

  it('count_tokens answers {input_tokens}', async () => {
    const before = kind.upstreamRequests().length;
    const params = { model: kind.model, system: 'Be brief.', messages: [QUESTION], tools: [TOOL] };
    const counted = await client().messages.countTokens(params);
    const seen = kind.upstreamRequests().slice(before);
    if (kind === native) {
      // Forwarded to the backend's own count_tokens, with the model renamed and the backend's key.
      expect(seen.map((r) => r.path)).toEqual(['/v1/messages/count_tokens']);
      expect(seen[0]!.headers['x-api-key']).toBe(KEYS.anthropicUpstream);
      expect(seen[0]!.body).toMatchObject({ model: 'upstream-claude' });
      expect(counted).toEqual({ input_tokens: countedTokens(seen[0]!.body!) });
    } else {
      // Chat has no count endpoint: the gateway's tokenizer counts, and no upstream is asked.
      expect(seen).toEqual([]);
      expect(counted.input_tokens).toBeGreaterThan(10);
      expect(counted.input_tokens).toBeLessThan(200);
      // The gateway's own answer names its request id where the SDK reads it.
      expect(counted._request_id).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('a request without max_tokens is the gateway refusal BadRequestError (invalid_request_error), before any upstream', async () => {
    const before = kind.upstreamRequests().length;
    const err = await client()
      .messages.create({ model: kind.model, messages: [QUESTION] } as never)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.APIError>).type).toBe('invalid_request_error');
    expect((err as InstanceType<typeof Anthropic.APIError>).requestID).toEqual(expect.any(String));
    expect(kind.upstreamRequests().length).toBe(before);
  });

  it("an upstream error answer reaches the SDK as its error class, in Anthropic's shape", async () => {
    // Five assistant turns: neither fake has a turn scripted that far. The native fake answers 400 in Anthropic's
    // shape (passed through unchanged); the chat fake answers 404 in OpenAI's (converted).
    const long = [QUESTION, ...Array.from({ length: 5 }, () => [{ role: 'assistant' as const, content: 'ok' }, QUESTION]).flat()];
    const err = (await client()
      .messages.create({ model: kind.model, max_tokens: 64, messages: long })
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    if (kind === native) {
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      expect(err.error).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'no scripted turn after 5 assistant turns' } });
    } else {
      expect(err).toBeInstanceOf(Anthropic.NotFoundError);
      expect(err.type).toBe('not_found_error');
      expect(err.apiMessage).toContain('no scripted answer');
    }
  });

  it('an upstream that dies mid-stream ends the stream with an error event, which the SDK raises as an APIError', async () => {
    const model = kind === native ? 'claude-x-cut-native' : 'claude-x-cut-translated';
    const stream = client().messages.stream({ model, max_tokens: 64, messages: [QUESTION] });
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).type).toBe('api_error');
    expect((err as InstanceType<typeof Anthropic.APIError>).apiMessage).toMatch(/upstream/);
  });
});

describe("the gateway's refusals as the SDK's error classes", () => {
  it('a bad key is AuthenticationError (authentication_error), in x-api-key and as a bearer token', async () => {
    for (const authToken of [false, true]) {
      const err = await client('sk-not-a-gateway-key', { authToken })
        .messages.create({ model: 'claude-native', max_tokens: 8, messages: [QUESTION] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
      expect((err as InstanceType<typeof Anthropic.APIError>).type).toBe('authentication_error');
    }
  });

  it('the gateway key as a bearer token (ANTHROPIC_AUTH_TOKEN) is accepted', async () => {
    const message = await client(KEYS.alice, { authToken: true }).messages.create({ model: 'claude-native', max_tokens: 8, messages: [QUESTION] });
    expect(message.type).toBe('message');
  });

  it("a model outside the key's group is PermissionDeniedError; an unknown one NotFoundError", async () => {
    const forbidden = await client()
      .messages.create({ model: 'claude-forbidden', max_tokens: 8, messages: [QUESTION] })
      .catch((e: unknown) => e);
    expect(forbidden).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((forbidden as InstanceType<typeof Anthropic.APIError>).type).toBe('permission_error');
    const unknown = await client()
      .messages.create({ model: 'claude-x-nowhere', max_tokens: 8, messages: [QUESTION] })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
    expect((unknown as InstanceType<typeof Anthropic.APIError>).type).toBe('not_found_error');
  });

  it('a model whose route does not serve the messages family is NotFoundError', async () => {
    const err = await client()
      .messages.create({ model: 'chat-only', max_tokens: 8, messages: [QUESTION] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
  });

  it('a group over its requests per minute is RateLimitError with retry-after', async () => {
    const limited = client(KEYS.limited);
    await limited.messages.create({ model: 'claude-native', max_tokens: 8, messages: [QUESTION] });
    const err = await limited.messages.create({ model: 'claude-native', max_tokens: 8, messages: [QUESTION] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect((err as InstanceType<typeof Anthropic.APIError>).type).toBe('rate_limit_error');
    expect(Number((err as InstanceType<typeof Anthropic.APIError>).headers?.get('retry-after'))).toBeGreaterThan(0);
  });

  it("token limits reserve the request's max_tokens: over the group's tokens per minute it is refused before any upstream", async () => {
    const before = anthropic.requests.length;
    const err = await client(KEYS.tight)
      .messages.create({ model: 'claude-native', max_tokens: 4096, messages: [QUESTION] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect(anthropic.requests.length).toBe(before);
    // The same request with a small max_tokens fits, and is served.
    const ok = await client(KEYS.tight).messages.create({ model: 'claude-native', max_tokens: 64, messages: [QUESTION] });
    expect(ok.type).toBe('message');
  });

  it('count_tokens on a translated route refuses what create would refuse, as BadRequestError naming the member', async () => {
    const before = chat.requests.length;
    for (const [messages, said] of [
      ['What is the weather?', /^messages: /],
      [[{ role: 'user', content: [{ type: 'server_tool_use', id: 's', name: 'web_search', input: {} }] }], /`server_tool_use`/],
    ] as const) {
      const err = (await client()
        .messages.countTokens({ model: 'claude-translated', messages } as never)
        .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      expect(err.type).toBe('invalid_request_error');
      expect(err.apiMessage).toMatch(said);
    }
    expect(chat.requests.length).toBe(before);
  });

  it('an unknown path under /v1/messages is NotFoundError in Anthropic shape', async () => {
    const res = await fetch(`${gw.origin}/v1/messages/batches`, { method: 'POST', headers: { 'x-api-key': KEYS.alice }, body: '{}' });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });
});

describe('a native backend gets the body as sent', () => {
  it('thinking blocks and signatures, cache_control, images, documents, metadata and unknown members pass unchanged; only model is renamed', async () => {
    const image = { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' };
    const sent = {
      model: 'claude-native',
      max_tokens: 256,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      metadata: { user_id: 'user-1' },
      thinking: { type: 'enabled', budget_tokens: 128 },
      context_management: { edits: [] },
      tools: [{ ...TOOL, cache_control: { type: 'ephemeral', ttl: '1h' } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look.' },
            { type: 'image', source: image },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'The user wants a look.', signature: 'EqQBCkgIARABGAIiQL+sig==' },
            { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
            { type: 'text', text: 'Seen.' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQ=' }, cache_control: { type: 'ephemeral' } },
            { type: 'text', text: 'And this?' },
          ],
        },
      ],
    };
    const before = anthropic.requests.length;
    const res = await fetch(`${gw.origin}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': KEYS.alice,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'interleaved-thinking-2025-05-14',
      },
      body: JSON.stringify(sent),
    });
    expect(res.status).toBe(200);
    const [seen] = anthropic.requests.slice(before);
    expect(seen!.body).toEqual({ ...sent, model: 'upstream-claude' });
    expect(seen!.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    expect(seen!.headers['anthropic-version']).toBe('2023-06-01');
  });
});

describe('routes that mix native and translated backends', () => {
  it('fail over from a native backend to a translated one: the body is made per backend', async () => {
    const before = chat.requests.length;
    const res = await client()
      .messages.create({ model: 'claude-x-failover', max_tokens: 1024, messages: [QUESTION], tools: [TOOL] })
      .withResponse();
    expect(res.response.headers.get('x-model-gateway-backend')).toBe('vllm');
    expect(res.data).toMatchObject(translated.expected(0));
    expect(chat.requests.slice(before).map((r) => r.body['model'])).toEqual(['upstream-chat-model']);
  });

  it('models.list() (anthropic-version sent) lists the models usable with the Messages API, in its shape', async () => {
    const ids: string[] = [];
    const { data: page, response } = await client().models.list().withResponse();
    expect(response.headers.get('request-id')).toBe(response.headers.get('x-request-id'));
    for await (const m of page) ids.push(m.id);
    expect(ids.sort()).toEqual(['claude-mixed', 'claude-native', 'claude-translated', 'claude-x-cut-native', 'claude-x-cut-translated', 'claude-x-failover']);
  });
});
