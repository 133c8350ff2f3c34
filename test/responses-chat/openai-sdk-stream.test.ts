// The openai SDK's streamed Responses (client.responses.stream and its helpers, create with stream: true) through
// the gateway to a chat completions backend: the SDK assembles the final response from the translated events, a
// function tool round trip works streamed, reasoning and several tool calls in one chunk each become their own item,
// the usage recorded is the chat usage the backend reported, and a stream the backend cuts ends in the Responses
// error event the SDK raises.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingServer, startRecordingServer } from '../fakes/recording-json-server.js';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { responsesChatManifests } from './manifests.js';
import { ANSWER, recorded, responseUsage, WEATHER_TOOL, weatherTurns } from './weather-chat.js';

let chat: ScriptedChatUpstream;
let packed: ScriptedChatUpstream;
let cut: ScriptedChatUpstream;
/** A chat server that ignores `stream` and answers whole. */
let whole: RecordingServer;
/** A chat server that streams, its event stream labelled application/json. */
let labelled: RecordingServer;
let gw: TestGateway;
let client: OpenAI;

const PACKED_USAGE = { prompt_tokens: 30, completion_tokens: 25, cached_tokens: 0, reasoning_tokens: 12 };

beforeAll(async () => {
  chat = await startScriptedChatUpstream(weatherTurns);
  packed = await startScriptedChatUpstream([
    {
      reasoning: 'Two cities, two calls.',
      toolCalls: [
        { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
      ],
      packed: true,
      finish: 'tool_calls',
      usage: PACKED_USAGE,
    },
  ]);
  cut = await startScriptedChatUpstream([{ text: 'The weather is', cut: true, finish: 'stop', usage: weatherTurns[1]!.usage }]);
  whole = await startRecordingServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'chatcmpl-whole',
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: ANSWER }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 9, completion_tokens: 4 },
      }),
    );
  });
  labelled = await startRecordingServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'chatcmpl-l', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.write('\n');
    res.write(chunk({ role: 'assistant', content: '' }));
    for (const word of ANSWER.split(/(?<= )/)) res.write(chunk({ content: word }));
    res.write(chunk({}, 'stop'));
    res.write(
      `data: ${JSON.stringify({ id: 'chatcmpl-l', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 11, completion_tokens: 6 } })}\n\n`,
    );
    res.end('data: [DONE]\n\n');
  });
  gw = await startGateway(
    responsesChatManifests(await deadBaseURL(), {
      'extra-chat': [['chatCompletions', chat.baseURL]],
      'extra-packed': [['chatCompletions', packed.baseURL]],
      'extra-cut': [['chatCompletions', cut.baseURL]],
      'extra-whole': [['chatCompletions', whole.baseURL]],
      'extra-labelled': [['chatCompletions', labelled.baseURL]],
    }),
  );
  client = new OpenAI({ apiKey: 'sk-alice-client-key-0123456789', baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([chat, packed, cut, whole, labelled].map((u) => u?.close()));
});

describe('streamed Responses from a chat completions backend', () => {
  it('responses.stream: a function tool round trip, the SDK assembling each final response; usage as the backend reported', async () => {
    const events: string[] = [];
    const stream = client.responses.stream({ model: 'extra-chat', input: 'Weather in Paris?', tools: [WEATHER_TOOL] });
    let args = '';
    stream.on('response.function_call_arguments.delta', (e) => (args += e.delta));
    for await (const e of stream) events.push(e.type);
    const first = await stream.finalResponse();
    expect(chat.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(events[0]).toBe('response.created');
    expect(events).toContain('response.function_call_arguments.done');
    expect(events.at(-1)).toBe('response.completed');
    expect(args).toBe('{"city":"Paris"}');
    expect(first.status).toBe('completed');
    expect(first.usage).toMatchObject(responseUsage(0));
    const call = first.output.find((i) => i.type === 'function_call')!;
    expect(call).toMatchObject({ call_id: 'call_weather_1', name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(await gw.record(String(chat.requests.at(-1)!.headers['x-request-id']))).toMatchObject({ status: 200, family: 'responses', ...recorded(0) });

    let text = '';
    const second = client.responses.stream({
      model: 'extra-chat',
      input: [{ role: 'user', content: 'Weather in Paris?' }, call, { type: 'function_call_output', call_id: 'call_weather_1', output: '18°C' }],
      tools: [WEATHER_TOOL],
    });
    second.on('response.output_text.delta', (e) => (text += e.delta));
    const final = await second.finalResponse();
    expect(text).toBe(ANSWER);
    expect(final.output_text).toBe(ANSWER);
    expect(final.usage).toMatchObject(responseUsage(1));
    expect(await gw.record(String(chat.requests.at(-1)!.headers['x-request-id']))).toMatchObject({ status: 200, ...recorded(1) });
  });

  it('create with stream: true: reasoning and two tool calls sent in the same chunks each become their own item, sequence numbers in order', async () => {
    const stream = await client.responses.create({ model: 'extra-packed', input: 'Paris and Rome?', tools: [WEATHER_TOOL], stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const added = events.filter((e) => e.type === 'response.output_item.added').map((e) => e.item.type);
    expect(added).toEqual(['reasoning', 'function_call', 'function_call']);
    const reasoning = events.filter((e) => e.type === 'response.reasoning_text.delta').map((e) => e.delta);
    expect(reasoning.join('')).toBe('Two cities, two calls.');
    const done = events.at(-1)!;
    expect(done.type).toBe('response.completed');
    const response = (done as OpenAI.Responses.ResponseCompletedEvent).response;
    expect(response.output.filter((i) => i.type === 'function_call').map((i) => [i.call_id, i.arguments])).toEqual([
      ['call_a', '{"city":"Paris"}'],
      ['call_b', '{"city":"Rome"}'],
    ]);
    expect(response.usage).toMatchObject({ input_tokens: 30, output_tokens: 25, output_tokens_details: { reasoning_tokens: 12 } });
    expect(await gw.record(String(packed.requests.at(-1)!.headers['x-request-id']))).toMatchObject({
      inputTokens: 30,
      outputTokens: 25,
      reasoningTokens: 12,
      estimated: false,
    });
  });

  it('a backend that ignores stream and answers whole: the SDK still gets the Responses events, with the usage', async () => {
    let text = '';
    const stream = client.responses.stream({ model: 'extra-whole', input: 'Weather?' });
    stream.on('response.output_text.delta', (e) => (text += e.delta));
    const final = await stream.finalResponse();
    expect(whole.requests[0]!.body).toMatchObject({ stream: true });
    expect(text).toBe(ANSWER);
    expect(final.usage).toMatchObject({ input_tokens: 9, output_tokens: 4 });
    expect(await gw.record(String(whole.requests[0]!.headers['x-request-id']))).toMatchObject({ inputTokens: 9, outputTokens: 4, estimated: false });
  });

  it('a chat event stream labelled application/json is translated as a stream: the SDK gets every delta, the usage reported', async () => {
    const deltas: string[] = [];
    const stream = client.responses.stream({ model: 'extra-labelled', input: 'Weather?' });
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(deltas.join('')).toBe(ANSWER);
    expect(deltas.length).toBeGreaterThan(1);
    expect(final.status).toBe('completed');
    expect(final.usage).toMatchObject({ input_tokens: 11, output_tokens: 6 });
    expect(await gw.record(String(labelled.requests[0]!.headers['x-request-id']))).toMatchObject({
      status: 200,
      inputTokens: 11,
      outputTokens: 6,
      estimated: false,
    });
  });

  it('a stream the backend cuts ends with the Responses error event, which the SDK raises after the text it had', async () => {
    const stream = client.responses.stream({ model: 'extra-cut', input: 'Weather?' });
    let text = '';
    stream.on('response.output_text.delta', (e) => (text += e.delta));
    const e = await stream.finalResponse().catch((err: unknown) => err);
    expect(text).toBe('The weather is');
    expect(e).toBeInstanceOf(Error);
    expect(String((e as Error).message)).toMatch(/upstream/i);
    const line = await gw.record(String(cut.requests.at(-1)!.headers['x-request-id']));
    expect(line).toMatchObject({ family: 'responses', estimated: true });
  });

  it("the error event that ends a cut stream is OpenAI's, continuing the translated events' sequence numbers", async () => {
    const res = await fetch(`${gw.baseURL}/responses`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-alice-client-key-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'extra-cut', input: 'Weather?', stream: true }),
    });
    const events = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as { type: string; sequence_number: number; code?: string });
    const last = events.at(-1)!;
    expect(last).toMatchObject({ type: 'error', code: 'upstream_error' });
    expect(last.sequence_number).toBe(events.at(-2)!.sequence_number + 1);
    expect(events.some((e) => e.type === 'response.completed')).toBe(false);
  });
});
