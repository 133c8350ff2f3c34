// A stream request that the upstream answers 200 with a whole JSON answer (a server that ignores `stream`, a cache
// that answers whole) reaches the openai SDK as the family's stream events, which it assembles into that same
// answer: on a route without keep-alives (the head waits for the events) and on one whose keep-alives had already
// committed the 200 (where the answer used to be retold as an error event). Usage is recorded as for any answer; an
// upstream error after the keep-alives is still an error event.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { APIError, toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Loopback, listenOnLoopback } from '../fakes/loopback.js';
import { ALICE_KEY, keepAliveRoute, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';
import { recordingFetch } from '../helpers/recording-fetch.js';

type Answer = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

let upstream: Loopback;
/** Method, path and body of each request the fake upstream got (JSON and forms alike). */
const requests: { method: string; path: string; body: string }[] = [];
let gw: TestGateway;
let answer: Answer = (_req, res) => {
  res.end();
};
beforeAll(async () => {
  upstream = await listenOnLoopback(
    createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      requests.push({ method: req.method ?? '', path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      await answer(req, res);
    }),
  );
  const baseURL = `${upstream.origin}/v1`;
  gw = await startGateway(standardManifests(baseURL, keepAliveRoute(baseURL) + messagesRoute(baseURL)));
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

/** A Messages route whose backend speaks chat completions (the gateway translates both ways). */
const messagesRoute = (baseURL: string) => `---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: extra-claude}
spec:
  model: extra-claude
  endpoints: [messages]
  backends:
  - {name: chat, baseURL: "${baseURL}", apiKeySecretRef: {name: upstream-credentials, key: apiKey}, model: upstream-chat}
`;

const completion = {
  id: 'chatcmpl-whole',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'upstream-chat',
  system_fingerprint: 'fp_whole',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Checking the weather.',
        refusal: null,
        tool_calls: [{ id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    },
  ],
  usage: { prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 },
};

const response = {
  id: 'resp_whole',
  object: 'response',
  created_at: 1_700_000_000,
  status: 'completed',
  model: 'upstream-chat',
  output: [
    {
      id: 'msg_whole',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'It is sunny in Paris.', annotations: [] }],
    },
    { id: 'fc_whole', type: 'function_call', status: 'completed', call_id: 'call_r', name: 'get_weather', arguments: '{"city":"Paris"}' },
  ],
  usage: { input_tokens: 30, output_tokens: 12, total_tokens: 42, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
};

/** Answers `body` whole as JSON, once `ready` (the client saw a keep-alive, when the route sends them). */
function whole(body: unknown, ready: Promise<void>, status = 200): Answer {
  return async (_req, res) => {
    await ready;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
}

/** A client whose fetch records the stream, and the promise the upstream waits on before it answers. */
function streamClient(keepAlive: boolean) {
  let saw!: () => void;
  const ready = keepAlive ? new Promise<void>((r) => (saw = r)) : Promise.resolve();
  const rec = recordingFetch(() => saw?.());
  const client = new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000, fetch: rec.fetch });
  return { client, rec, ready };
}

describe.each([
  ['without keep-alives', 'gpt-4o-mini', false],
  ['after keep-alives committed the 200', 'extra-keepalive', true],
])('a whole answer to a stream request, %s', (_name, model, keepAlive) => {
  it('chat: the SDK assembles the completion (text, tool calls, finish reason, usage asked for), and the record has its usage', async () => {
    const { client, rec, ready } = streamClient(keepAlive);
    answer = whole(completion, ready);
    const stream = client.chat.completions.stream({
      model,
      messages: [{ role: 'user', content: 'weather?' }],
      stream_options: { include_usage: true },
    });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'Checking the weather.' });
    expect(final.choices[0]!.message.tool_calls).toEqual([
      { id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ]);
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.usage).toEqual(completion.usage);
    expect(final).toMatchObject({ id: 'chatcmpl-whole', model: 'upstream-chat', system_fingerprint: 'fp_whole' });
    expect(rec.seen.text.includes(': keep-alive')).toBe(keepAlive);
    expect(rec.seen.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(await gw.record(rec.seen.requestId)).toMatchObject({ status: 200, inputTokens: 40, outputTokens: 9, estimated: false });
  });

  it('chat: without stream_options.include_usage no chunk carries a usage, as a stream would', async () => {
    const { client, rec, ready } = streamClient(keepAlive);
    answer = whole(completion, ready);
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'weather?' }], stream: true }))
      chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.finish_reason ?? null)).toEqual([null, 'tool_calls']);
    expect(chunks[0]!.choices[0]!.delta.content).toBe('Checking the weather.');
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.usage === undefined)).toBe(true);
    expect(await gw.record(rec.seen.requestId)).toMatchObject({ status: 200, inputTokens: 40, outputTokens: 9 });
  });

  it('responses: responses.stream() rebuilds the response, its id sealed as a whole answer carries it', async () => {
    const { client, rec, ready } = streamClient(keepAlive);
    answer = whole(response, ready);
    const stream = client.responses.stream({ model, input: 'weather?' });
    const types: string[] = [];
    stream.on('event', (e) => types.push(e.type));
    const final = await stream.finalResponse();
    expect(final.output).toMatchObject(response.output);
    expect(final.output_text).toBe('It is sunny in Paris.');
    expect(final.usage).toEqual(response.usage);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(types).toContain('response.output_text.delta');
    expect(types).toContain('response.function_call_arguments.done');
    expect(await gw.record(rec.seen.requestId)).toMatchObject({ status: 200, inputTokens: 30, outputTokens: 12, estimated: false });
    // The id is the gateway's sealed one, which a follow-up resolves to the upstream's.
    expect(final.id).not.toBe('resp_whole');
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(response));
    };
    await client.responses.retrieve(final.id);
    expect(requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/responses/resp_whole' });
  });

  it('images: the SDK gets the image_generation.completed event with the image and usage', async () => {
    const { client, rec, ready } = streamClient(keepAlive);
    const image = {
      created: 1_700_000_000,
      data: [{ b64_json: 'aW1hZ2U=' }],
      size: '1024x1024',
      quality: 'low',
      output_format: 'png',
      usage: { input_tokens: 5, output_tokens: 70, total_tokens: 75 },
    };
    answer = whole(image, ready);
    const events = [];
    for await (const e of await client.images.generate({ model: keepAlive ? model : 'org/image-model', prompt: 'a cat', stream: true })) events.push(e);
    expect(events).toEqual([
      {
        type: 'image_generation.completed',
        b64_json: 'aW1hZ2U=',
        created_at: 1_700_000_000,
        size: '1024x1024',
        quality: 'low',
        output_format: 'png',
        usage: image.usage,
      },
    ]);
    expect(await gw.record(rec.seen.requestId)).toMatchObject({ status: 200, images: 1 });
  });

  it('image edits (a form asking for a stream): the image_edit.completed event', async () => {
    const { client, rec, ready } = streamClient(keepAlive);
    answer = whole({ created: 1_700_000_000, data: [{ b64_json: 'ZWRpdA==' }], usage: { input_tokens: 5, output_tokens: 70, total_tokens: 75 } }, ready);
    const events = [];
    const image = await toFile(Buffer.from('png'), 'cat.png', { type: 'image/png' });
    for await (const e of await client.images.edit({ model: keepAlive ? model : 'org/image-model', image, prompt: 'a hat', stream: true })) events.push(e);
    expect(events).toEqual([
      { type: 'image_edit.completed', b64_json: 'ZWRpdA==', created_at: 1_700_000_000, usage: { input_tokens: 5, output_tokens: 70, total_tokens: 75 } },
    ]);
    expect(rec.seen.text.includes(': keep-alive')).toBe(keepAlive);
    expect(await gw.record(rec.seen.requestId)).toMatchObject({ status: 200, images: 1 });
  });

  it('transcriptions (whisper-1 does not stream): the text delta and done events, with the usage recorded', async () => {
    const { client, rec, ready } = streamClient(keepAlive);
    const usage = { type: 'tokens', input_tokens: 14, output_tokens: 6, total_tokens: 20 };
    answer = whole({ text: 'Hello there.', usage }, ready);
    const file = await toFile(Buffer.from('RIFF'), 'hello.wav', { type: 'audio/wav' });
    const events = [];
    for await (const e of await client.audio.transcriptions.create({ model: keepAlive ? model : 'whisper-1', file, stream: true })) events.push(e);
    expect(events).toEqual([
      { type: 'transcript.text.delta', delta: 'Hello there.' },
      { type: 'transcript.text.done', text: 'Hello there.', usage },
    ]);
    expect(rec.seen.text.includes(': keep-alive')).toBe(keepAlive);
    expect(await gw.record(rec.seen.requestId)).toMatchObject({ status: 200, inputTokens: 14, outputTokens: 6, estimated: false });
  });
});

describe('an upstream error after keep-alives committed the 200', () => {
  it('is still an error event, which the SDK raises', async () => {
    const { client, rec, ready } = streamClient(true);
    answer = whole({ error: { message: 'the model crashed', type: 'server_error', param: null, code: null } }, ready, 500);
    const err = await client.chat.completions
      .stream({ model: 'extra-keepalive', messages: [{ role: 'user', content: 'hi' }] })
      .finalChatCompletion()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).message).toContain('the model crashed');
    expect(rec.seen.text).toMatch(/^: keep-alive/);
    expect(rec.seen.text).toContain('event: error');
  });
});

describe('an event stream its upstream labelled application/json', () => {
  it('is passed on as it comes, not held as a whole answer', async () => {
    const { client, rec } = streamClient(false);
    let sendRest!: () => void;
    const rest = new Promise<void>((r) => (sendRest = r));
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    answer = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(chunk({ role: 'assistant', content: 'Hel' }));
      await rest;
      res.end(`${chunk({ content: 'lo' }, 'stop')}data: [DONE]\n\n`);
    };
    const stream = client.chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    // The first event reaches the client while the upstream still holds the rest back.
    stream.on('content', () => sendRest());
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe('Hello');
    expect(rec.seen.text.startsWith('data: ')).toBe(true);
  });
});

describe('an event stream labelled application/json, with the usage the gateway asked for', () => {
  // OpenAI's stream once include_usage is set: `"usage":null` on every chunk, then a usage-only chunk.
  const chunk = (choices: object[], usage: object | null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices, usage })}\n\n`;
  const usage = { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 };
  const mislabelled: Answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    // A blank line first, written apart: what the body is stays undecided until its first byte past whitespace.
    res.write('\n');
    res.write(chunk([{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }], null));
    res.end(`${chunk([{ index: 0, delta: { content: 'lo' }, finish_reason: 'stop' }], null)}${chunk([], usage)}data: [DONE]\n\n`);
  };

  it('reaches a client that did not ask for usage without the usage chunk or the null usages; the record has the counts', async () => {
    const { client, rec } = streamClient(false);
    answer = mislabelled;
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true }))
      chunks.push(c);
    expect(JSON.parse(requests.at(-1)!.body).stream_options).toEqual({ include_usage: true });
    expect(chunks.map((c) => c.choices[0]?.delta.content)).toEqual(['Hel', 'lo']);
    expect(chunks.every((c) => !('usage' in c))).toBe(true);
    expect(rec.seen.text).not.toContain('"usage"');
    expect(await gw.record(rec.seen.requestId)).toMatchObject({ status: 200, inputTokens: 11, outputTokens: 2, estimated: false });
  });

  it('reaches a client that asked for usage whole, the usage chunk included', async () => {
    const { client, rec } = streamClient(false);
    answer = mislabelled;
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    const params = {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user' as const, content: 'hi' }],
      stream: true as const,
      stream_options: { include_usage: true },
    };
    for await (const c of await client.chat.completions.create(params)) chunks.push(c);
    expect(chunks.map((c) => c.usage)).toEqual([null, null, usage]);
    expect(await gw.record(rec.seen.requestId)).toMatchObject({ status: 200, inputTokens: 11, outputTokens: 2 });
  });
});

describe('an event stream labelled application/json whose upstream ignores include_usage', () => {
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const labelled =
    (type: string): Answer =>
    (_req, res) => {
      res.writeHead(200, { 'content-type': type });
      res.write(chunk({ role: 'assistant', content: 'The quick brown fox ' }));
      res.end(`${chunk({ content: 'jumps over the lazy dog, twice over.' }, 'stop')}data: [DONE]\n\n`);
    };

  it('has its output estimated from the deltas, as the same stream labelled text/event-stream', async () => {
    const outputs: unknown[] = [];
    for (const type of ['text/event-stream', 'application/json']) {
      const { client, rec } = streamClient(false);
      answer = labelled(type);
      const stream = client.chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
      expect((await stream.finalChatCompletion()).choices[0]!.message.content).toBe('The quick brown fox jumps over the lazy dog, twice over.');
      const record = await gw.record(rec.seen.requestId);
      expect(record).toMatchObject({ status: 200, estimated: true });
      outputs.push(record['outputTokens']);
    }
    expect(outputs[0]).toBeGreaterThan(5);
    expect(outputs[1]).toBe(outputs[0]);
  });
});

describe('a Messages stream translated from a chat stream labelled application/json', () => {
  it('reaches @anthropic-ai/sdk as Messages events: the final message is the streamed text, the record has the usage', async () => {
    const chunk = (choices: object[], usage: object | null) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-chat', choices, usage })}\n\n`;
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`\n${chunk([{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }], null)}`);
      res.end(
        `${chunk([{ index: 0, delta: { content: 'lo there' }, finish_reason: 'stop' }], null)}${chunk([], { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 })}data: [DONE]\n\n`,
      );
    };
    const claude = new Anthropic({ apiKey: ALICE_KEY, baseURL: gw.origin, maxRetries: 0, timeout: 10_000 });
    const stream = claude.messages.stream({ model: 'extra-claude', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    const final = await stream.finalMessage();
    expect(final.content).toMatchObject([{ type: 'text', text: 'Hello there' }]);
    expect(texts.join('')).toBe('Hello there');
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ input_tokens: 12, output_tokens: 3 });
    expect(JSON.parse(requests.at(-1)!.body)).toMatchObject({ model: 'upstream-chat', stream: true });
    const id = (await stream.withResponse()).response.headers.get('x-request-id');
    expect(await gw.record(id)).toMatchObject({ status: 200, inputTokens: 12, outputTokens: 3, estimated: false });
  });
});

describe('a whole answer that is not the family’s', () => {
  it('is a 502 the SDK raises, not a 200 cut short', async () => {
    const { client, ready } = streamClient(false);
    answer = whole({ object: 'list', data: [] }, ready);
    const err = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(502);
    expect((err as APIError).message).toMatch(/not a chat completion/);
  });
});
