// What a chat completions backend's answers become on a translated route, through the real HTTP stack, with
// @anthropic-ai/sdk as the judge: the answers a scripted conversation does not play (error pages, answers the
// gateway cannot translate, a client that leaves mid-stream). The fake chat backend answers each request as the
// test sets it; behind a native backend too (claude-x-scripted-native), for a native refusal relayed as sent.
import Anthropic from '@anthropic-ai/sdk';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicUpstream, type AnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { type RecordingServer, startRecordingServer } from '../fakes/recording-json-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitUntil } from '../support/wait.js';
import { KEYS, messagesManifests } from './manifests.js';
import { anthropicTurns, QUESTION } from './weather-conversation.js';

type Answer = (req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) => void;

let answer: Answer;
let chat: RecordingServer;
let anthropic: AnthropicUpstream;
let gw: TestGateway;

beforeAll(async () => {
  chat = await startRecordingServer((req, res, seen) => answer(req, res, seen.body));
  anthropic = await startAnthropicUpstream(anthropicTurns);
  gw = await startGateway(
    messagesManifests({ anthropic: anthropic.baseURL, chat: chat.baseURL, extra: { 'claude-x-scripted-native': ['anthropic', chat.baseURL] } }),
  );
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([chat, anthropic].map((u) => u?.close()));
});

const client = () => new Anthropic({ apiKey: KEYS.alice, baseURL: gw.origin, maxRetries: 0, timeout: 10_000 });
const ask = { model: 'claude-translated', max_tokens: 64, messages: [QUESTION] };

/** The x-request-id the gateway sent the chat backend with its last request. */
const lastUpstreamId = () => chat.requests.at(-1)!.headers['x-request-id'];

const completion =
  (content: string): Answer =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'chatcmpl-1', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] }));
  };

describe('request-id on translated answers', () => {
  it("names the gateway's request id, which the SDK reports for a message, a stream and an error", async () => {
    answer = completion('Sunny.');
    const message = await client().messages.create(ask);
    expect(message._request_id).toBe(lastUpstreamId());

    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { content: 'Sunny.' }, finish_reason: 'stop' }] })}\n\n`);
      res.end('data: [DONE]\n\n');
    };
    const stream = client().messages.stream(ask);
    await stream.finalMessage();
    expect(stream.request_id).toBe(lastUpstreamId());

    answer = (_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
      res.end(JSON.stringify({ error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } }));
    };
    const err = (await client()
      .messages.create(ask)
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect(err.requestID).toBe(lastUpstreamId());
    expect(err.headers?.get('retry-after')).toBe('7');
  });

  it("keeps a native backend's own request-id", async () => {
    const message = await client().messages.create({ ...ask, model: 'claude-native' });
    expect(message._request_id).toBe('req_fake');
  });
});

describe("a backend's 401 (it refused the gateway's key, not the client's)", () => {
  it('is a 502 api_error naming the backend, never an AuthenticationError, and the SDK does not retry it', async () => {
    answer = (_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }));
    };
    const before = chat.requests.length;
    const err = (await new Anthropic({ apiKey: KEYS.alice, baseURL: gw.origin, maxRetries: 2 }).messages.create(ask).catch((e: unknown) => e)) as InstanceType<
      typeof Anthropic.APIError
    >;
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    expect(err).not.toBeInstanceOf(Anthropic.AuthenticationError);
    expect(err.status).toBe(502);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    const told = (err.error as { error: { message: string } }).error.message;
    expect(told).toMatch(/^Backend "vllm" of model "claude-translated" refused the gateway's own credential/);
    expect(chat.requests.length - before).toBe(1);
  });
});

describe("a chat backend's error page", () => {
  it('is retold as JSON in Anthropic shape, with a JSON content type, status kept', async () => {
    answer = (_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html><body>Bad gateway</body></html>');
    };
    const res = await fetch(`${gw.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': KEYS.alice, 'content-type': 'application/json' },
      body: JSON.stringify(ask),
    });
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ type: 'error', error: { type: 'api_error', message: '<html><body>Bad gateway</body></html>' } });
  });
});

describe('a whole answer the gateway cannot translate', () => {
  it.each([
    [
      'tool arguments that are not JSON',
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'Bash', arguments: '{"command": "rm' } }] },
      /`Bash`/,
    ],
    ['an answer that is not a chat completion', undefined, /not a chat completion/],
  ])('(%s) is a 502 api_error the SDK raises, not a cut connection after a 200', async (_name, message, said) => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(message ? { id: 'chatcmpl-bad', choices: [{ index: 0, message, finish_reason: 'tool_calls' }] } : { object: 'list', data: [] }));
    };
    const err = (await client()
      .messages.create(ask)
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    expect(err.status).toBe(502);
    expect(err.type).toBe('api_error');
    expect(err.apiMessage).toMatch(said);
    expect(err.requestID).toBe(lastUpstreamId());
    expect(await accessLine()).toMatchObject({ status: 502 });
  });

  it('records the usage the backend reported in it: the backend charged for the answer the client did not get', async () => {
    const message = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'Bash', arguments: '{"cmd' } }] };
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-bad',
          choices: [{ index: 0, message, finish_reason: 'tool_calls' }],
          usage: { prompt_tokens: 1234, completion_tokens: 56 },
        }),
      );
    };
    const err = await client()
      .messages.create(ask)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    expect(await accessLine()).toMatchObject({ status: 502, inputTokens: 1234, outputTokens: 56, estimated: false });
  });
});

describe('a chat backend that answers a stream request with a whole completion', () => {
  it("is sent as Anthropic's events, which the SDK assembles into the answer (text, tool use, stop reason, usage)", async () => {
    const message = {
      role: 'assistant',
      content: 'Checking.',
      tool_calls: [{ id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
    };
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-whole',
          choices: [{ index: 0, message, finish_reason: 'tool_calls' }],
          usage: { prompt_tokens: 40, completion_tokens: 9 },
        }),
      );
    };
    const stream = client().messages.stream(ask);
    const final = await stream.finalMessage();
    expect(final.content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'call_w', name: 'get_weather', input: { city: 'Paris' } },
    ]);
    expect(final).toMatchObject({ stop_reason: 'tool_use', usage: { input_tokens: 40, output_tokens: 9 } });
    expect(await accessLine()).toMatchObject({ status: 200, inputTokens: 40, outputTokens: 9, estimated: false });

    const res = await fetch(`${gw.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': KEYS.alice, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ ...ask, stream: true }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = [...(await res.text()).matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
    expect(events[0]).toBe('message_start');
    expect(events.slice(-2)).toEqual(['message_delta', 'message_stop']);
  });

  it('that cannot be translated is the 502 api_error the SDK raises', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [] }));
    };
    const err = await client()
      .messages.stream(ask)
      .finalMessage()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    expect((err as InstanceType<typeof Anthropic.APIError>).apiMessage).toMatch(/not a chat completion/);
  });
});

describe("a native backend's refusal, its only backend", () => {
  it.each([
    [429, 'rate_limit_error', Anthropic.RateLimitError],
    [529, 'overloaded_error', Anthropic.InternalServerError],
  ])('%i reaches the SDK as %s with its body, retry-after and anthropic-ratelimit-* headers as sent', async (status, type, errorClass) => {
    const body = JSON.stringify({ type: 'error', error: { type, message: `upstream says ${type}` }, request_id: 'req_upstream_1' });
    const headers = {
      'content-type': 'application/json',
      'retry-after': '13',
      'anthropic-ratelimit-requests-remaining': '0',
      'anthropic-ratelimit-tokens-reset': '2026-01-01T00:00:13Z',
      'request-id': 'req_upstream_1',
    };
    answer = (_req, res) => {
      res.writeHead(status, headers);
      res.end(body);
    };
    const err = (await client()
      .messages.create({ ...ask, model: 'claude-x-scripted-native' })
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(err).toBeInstanceOf(errorClass);
    expect(err.status).toBe(status);
    expect(err.error).toEqual(JSON.parse(body));
    expect(err.requestID).toBe('req_upstream_1');
    for (const [name, value] of Object.entries(headers)) if (name !== 'content-type') expect(err.headers?.get(name)).toBe(value);
    expect(chat.requests.at(-1)!.path).toBe('/v1/messages');
  });
});

/** The access line of the gateway's last request to the chat backend. */
async function accessLine(): Promise<Record<string, unknown>> {
  const id = lastUpstreamId();
  return waitUntil(() => gw.logs.find((l) => l['msg'] === 'request' && l['reqId'] === id), 5_000, `the access line of ${String(id)}`);
}

describe('a client that leaves a translated stream', () => {
  it("is let go at once, the backend's answer is read on, and its usage recorded", async () => {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'chatcmpl-left', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    let upstreamDone!: () => void;
    const finished = new Promise<void>((resolve) => (upstreamDone = resolve));
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ content: 'It is' }));
      // The rest comes after the client left: the finish, then the usage the upstream charges.
      setTimeout(() => {
        res.write(chunk({ content: ' sunny.' }) + chunk({}, 'stop'));
        res.end(`data: ${JSON.stringify({ id: 'chatcmpl-left', choices: [], usage: { prompt_tokens: 21, completion_tokens: 4 } })}\n\ndata: [DONE]\n\n`);
        upstreamDone();
      }, 300);
    };
    const ac = new AbortController();
    const stream = await client().messages.create({ ...ask, stream: true }, { signal: ac.signal });
    for await (const event of stream) if (event.type === 'content_block_delta') break; // leaves after the first text
    ac.abort();
    await finished;
    expect(await accessLine()).toMatchObject({ status: 200, aborted: true, inputTokens: 21, outputTokens: 4, estimated: false });
  });
});
