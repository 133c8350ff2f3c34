// Chat completions features through the official node SDK, against an upstream that writes OpenAI's chunks
// (`"usage": null` on each when asked for usage, an `obfuscation` member, several choices): the client gets the
// chunks it asked for, its helpers assemble them, and the usage is recorded once.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingServer, startRecordingServer } from '../fakes/recording-json-server.js';
import { standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';

type Body = Record<string, unknown> & { model: string; stream_options?: { include_usage?: boolean } };

let gw: TestGateway;
let upstream: RecordingServer;
let answer: (res: ServerResponse, body: Body) => void;

beforeAll(async () => {
  upstream = await startRecordingServer((_req, res, seen) => answer(res, seen.body as Body));
  gw = await startGateway(standardManifests(upstream.baseURL));
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

/** The body of the last request the upstream got. */
const lastSeen = () => upstream.requests.at(-1)?.body;

const record = (id: string | null) => gw.record(id);
const user = [{ role: 'user' as const, content: 'hi' }];

/** OpenAI's stream: one chunk per `choices` given, then (when asked) the usage-only chunk, then [DONE]. */
function openaiStream(res: ServerResponse, body: Body, choices: readonly object[][], usage: object, extra: readonly string[] = []): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const asked = body.stream_options?.include_usage === true;
  const head = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: body.model, service_tier: 'default', system_fingerprint: 'fp' };
  for (const c of choices) res.write(`data: ${JSON.stringify({ ...head, choices: c, ...(asked ? { usage: null } : {}), obfuscation: 'Zq' })}\n\n`);
  for (const e of extra) res.write(e);
  if (asked) res.write(`data: ${JSON.stringify({ ...head, choices: [], usage, obfuscation: 'k' })}\n\n`);
  res.end('data: [DONE]\n\n');
}

const toolDelta = (index: number, args: string, id?: string) => [
  {
    index: 0,
    delta: { tool_calls: [{ index, ...(id ? { id, type: 'function', function: { name: 'weather', arguments: args } } : { function: { arguments: args } }) }] },
    finish_reason: null,
  },
];

describe('chat completions through the node SDK', () => {
  it('n: 3 streamed without include_usage: the chunks of every choice as asked, no usage member, the usage recorded once; other stream options kept', async () => {
    answer = (res, body) =>
      openaiStream(
        res,
        body,
        [0, 1, 2].flatMap((index) => [
          [{ index, delta: { role: 'assistant', content: `c${index}` }, finish_reason: null }],
          [{ index, delta: {}, finish_reason: 'stop' }],
        ]),
        { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11, completion_tokens_details: { audio_tokens: 3, reasoning_tokens: 0 } },
      );
    const { data: stream, response } = await gw
      .client()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: user, stream: true, n: 3, stream_options: { include_obfuscation: false } })
      .withResponse();
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(lastSeen()?.['stream_options']).toEqual({ include_obfuscation: false, include_usage: true });
    expect(chunks.map((c) => c.choices[0]?.index)).toEqual([0, 0, 1, 1, 2, 2]);
    expect(chunks.filter((c) => 'usage' in c)).toEqual([]);
    expect(await record(response.headers.get('x-request-id'))).toMatchObject({ inputTokens: 5, outputTokens: 6, estimated: false });
  });

  it('a 1 MB content delta is relayed whole, without the null usage asking added', async () => {
    const big = 'x'.repeat(1024 * 1024);
    answer = (res, body) =>
      openaiStream(res, body, [[{ index: 0, delta: { content: big }, finish_reason: null }], [{ index: 0, delta: {}, finish_reason: 'stop' }]], {
        prompt_tokens: 5,
        completion_tokens: 6,
      });
    const chunks = [];
    for await (const c of await gw.client().chat.completions.create({ model: 'gpt-4o-mini', messages: user, stream: true })) chunks.push(c);
    expect(chunks[0]?.choices[0]?.delta.content).toBe(big);
    expect(chunks.filter((c) => 'usage' in c)).toEqual([]);
  });

  it('parallel tool calls and logprobs streamed: the stream() helper assembles them in finalChatCompletion()', async () => {
    const logprobs = { content: [{ token: 'x', logprob: -1, bytes: [120], top_logprobs: [{ token: 'x', logprob: -1, bytes: [120] }] }], refusal: null };
    answer = (res, body) =>
      openaiStream(
        res,
        body,
        [
          [{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }],
          toolDelta(0, '', 'call_a'),
          toolDelta(0, '{"city":'),
          toolDelta(1, '', 'call_b'),
          toolDelta(1, '{"city":"Oslo"}'),
          toolDelta(0, '"Paris"}'),
          [{ index: 0, delta: {}, logprobs, finish_reason: 'tool_calls' }],
        ],
        { prompt_tokens: 5, completion_tokens: 6 },
      );
    const final = await gw
      .client()
      .chat.completions.stream({
        model: 'gpt-4o-mini',
        messages: user,
        logprobs: true,
        top_logprobs: 3,
        tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      })
      .finalChatCompletion();
    const calls = final.choices[0]?.message.tool_calls?.map((c) => (c.type === 'function' ? [c.id, c.function.arguments] : []));
    expect(calls).toEqual([
      ['call_a', '{"city":"Paris"}'],
      ['call_b', '{"city":"Oslo"}'],
    ]);
    expect(final.choices[0]?.logprobs?.content?.[0]?.top_logprobs).toHaveLength(1);
    expect(final.usage).toBeUndefined();
  });

  it('an error event mid-stream is raised by the SDK', async () => {
    const error = `data: ${JSON.stringify({ error: { message: 'the model overloaded', type: 'server_error' } })}\n\n`;
    answer = (res, body) =>
      openaiStream(res, body, [[{ index: 0, delta: { content: 'a' }, finish_reason: null }]], { prompt_tokens: 5, completion_tokens: 6 }, [error]);
    const stream = await gw.client().chat.completions.create({ model: 'gpt-4o-mini', messages: user, stream: true });
    await expect(
      (async () => {
        for await (const _ of stream);
      })(),
    ).rejects.toThrow(/the model overloaded/);
  });

  it('structured outputs: parse() gives the parsed answer and the refusal of each choice', async () => {
    answer = (res, body) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          created: 1,
          model: body.model,
          service_tier: 'flex',
          choices: [
            { index: 0, message: { role: 'assistant', content: '{"a":1}', refusal: null }, finish_reason: 'stop' },
            { index: 1, message: { role: 'assistant', content: null, refusal: 'I cannot' }, finish_reason: 'stop' },
          ],
          usage: { prompt_tokens: 1, completion_tokens: 2 },
        }),
      );
    };
    const schema = { type: 'object', properties: { a: { type: 'number' } }, required: ['a'], additionalProperties: false };
    const r = await gw.client().chat.completions.parse({
      model: 'gpt-4o-mini',
      n: 2,
      service_tier: 'flex',
      messages: user,
      response_format: { type: 'json_schema', json_schema: { name: 'x', strict: true, schema } },
    });
    expect(r.choices.map((c) => [c.message.parsed, c.message.refusal])).toEqual([
      [{ a: 1 }, null],
      [null, 'I cannot'],
    ]);
    expect(r.service_tier).toBe('flex');
    expect(lastSeen()).toMatchObject({ response_format: { type: 'json_schema' }, service_tier: 'flex' });
  });
});
