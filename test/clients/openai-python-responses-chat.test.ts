// openai-python against the Responses API answered by a chat completions backend (api: chatCompletions, a scripted
// fake on loopback): a function tool round trip whole and streamed, the responses.stream helper's final response,
// responses.parse into a pydantic model, output_text and usage, a cut stream raising, a built-in tool refused as
// BadRequestError, retrieve and delete of the Response the gateway kept, and previous_response_id continuing a
// conversation the gateway kept. Its pydantic models and stream
// accumulators are stricter than the node SDK's. The client runs in the virtualenv scripts/py-clients.mjs sets up;
// without it this test fails, it does not skip.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs helper shared with scripts/run-tests.mjs
import { ensurePythonClients, PYTHON } from '../../scripts/py-clients.mjs';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { ALICE_KEY, deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { responsesChatManifests } from '../responses-chat/manifests.js';
import { ANSWER, recorded, responseUsage, weatherTurns } from '../responses-chat/weather-chat.js';
import { REPO_ROOT } from '../support/spawn-cli.js';

let chat: ScriptedChatUpstream;
let structured: ScriptedChatUpstream;
let cut: ScriptedChatUpstream;
let gw: TestGateway;
let seen: Record<string, any>;

beforeAll(async () => {
  expect(ensurePythonClients(), 'the Python clients could not be installed (see the log above)').toBe(true);
  chat = await startScriptedChatUpstream(weatherTurns);
  structured = await startScriptedChatUpstream([{ text: '{"city":"Paris","celsius":18}', finish: 'stop', usage: weatherTurns[1]!.usage }]);
  cut = await startScriptedChatUpstream([{ text: 'The weather is', cut: true, finish: 'stop', usage: weatherTurns[1]!.usage }]);
  gw = await startGateway(
    responsesChatManifests(await deadBaseURL(), {
      'extra-chat': [['chatCompletions', chat.baseURL]],
      'extra-structured': [['chatCompletions', structured.baseURL]],
      'extra-cut': [['chatCompletions', cut.baseURL]],
    }),
  );
  // Asynchronously: the fakes live in this process and must keep answering meanwhile.
  const script = join(REPO_ROOT, 'test/clients/openai_python_responses_chat.py');
  const run = await promisify(execFile)(PYTHON, [script, gw.baseURL, ALICE_KEY], { timeout: 90_000 });
  seen = JSON.parse(run.stdout);
}, 180_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([chat, structured, cut].map((u) => u?.close()));
});

/** The value a call returned; fails with what the SDK raised instead. */
function value(name: string): any {
  expect(seen[name], JSON.stringify(seen[name])).toMatchObject({ ok: true });
  return seen[name].value;
}

const CALL = { type: 'function_call', call_id: 'call_weather_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' };

describe('openai-python on the Responses API answered by a chat completions backend', () => {
  it('a whole function tool round trip: function_call, its function_call_output as a tool message, output_text and usage', async () => {
    const r = value('round_trip');
    expect(r.id).toMatch(/^resp_/);
    expect(r).toMatchObject({ status: 'completed', call: CALL, usage: responseUsage(0), text: ANSWER, usage2: responseUsage(1) });
    const [first, second] = chat.requests;
    expect(first!.body).toMatchObject({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
      ],
      max_tokens: 300,
    });
    expect(second!.body['messages'].slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_weather_1', content: '18°C, sunny' },
    ]);
    expect(await gw.record(String(second!.headers['x-request-id']))).toMatchObject({ status: 200, family: 'responses', ...recorded(1) });
  });

  it('stream=True: created first, completed last, sequence numbers in order, the call and usage in the final response', () => {
    const s = value('stream');
    expect(s.types[0]).toBe('response.created');
    expect(s.types.at(-1)).toBe('response.completed');
    expect(s.types).toContain('response.function_call_arguments.done');
    expect(s.sequence).toEqual(s.sequence.map((_: number, i: number) => i));
    expect(s.output).toEqual([expect.objectContaining(CALL)]);
    expect(s.usage).toMatchObject(responseUsage(0));
  });

  it('responses.stream with get_final_response after a function_call_output: the deltas, output_text and usage agree', () => {
    const s = value('stream_helper');
    expect(s).toMatchObject({ deltas: ANSWER, text: ANSWER, status: 'completed', usage: responseUsage(1) });
    expect(s.id).toMatch(/^resp_/);
    expect(chat.requests[3]!.body['stream']).toBe(true);
  });

  it('responses.parse with a pydantic model: sent as a json_schema response_format, output_parsed by the SDK', () => {
    expect(value('parse')).toEqual({ parsed: { city: 'Paris', celsius: 18 }, text: '{"city":"Paris","celsius":18}' });
    expect(structured.requests[0]!.body['response_format']).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'City', strict: true, schema: { required: ['city', 'celsius'], additionalProperties: false } },
    });
  });

  it('responses.stream with text_format: the final response parsed; responses.parse with a strict tool: its arguments parsed', () => {
    expect(value('parse_stream')).toEqual({ parsed: { city: 'Paris', celsius: 18 } });
    expect(structured.requests[1]!.body).toMatchObject({ stream: true, response_format: { type: 'json_schema' } });
    expect(value('parse_tool')).toEqual({ parsed_arguments: { city: 'Paris' } });
    expect(chat.requests[4]!.body['tools'][0].function).toMatchObject({ name: 'get_weather', strict: true });
  });

  it('a stream the backend cuts raises APIError from the iterator', () => {
    expect(seen['cut']).toMatchObject({ ok: false, error: 'APIError', message: expect.stringContaining('upstream') });
  });

  it('a built-in tool refused as BadRequestError naming it; retrieve of the kept Response, its input items, delete, then NotFoundError', () => {
    expect(seen['web_search']).toMatchObject({ ok: false, error: 'BadRequestError', status: 400, message: expect.stringContaining('web_search') });
    expect(value('retrieve')).toEqual({
      same: true,
      items: [
        {
          type: 'message',
          id: expect.stringMatching(/^msg_/),
          role: 'user',
          status: 'completed',
          content: [{ type: 'input_text', text: 'Weather in Paris?' }],
        },
      ],
      deleted: null,
      after: 'not_found',
    });
    // The round trip's two, the stream's, the helper's, parse's, retrieve's create, and the continued conversation's two.
    expect(chat.requests).toHaveLength(8);
  });

  it('previous_response_id: the second turn continues the first, which the gateway kept; the backend gets the whole conversation', () => {
    const r = value('previous_response');
    expect(r.previous_response_id).toBe(r.first);
    expect(r.text).toBe(ANSWER);
    expect(chat.requests.at(-1)!.body['messages']).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_weather_1', content: '18°C, sunny' },
    ]);
  });
});
