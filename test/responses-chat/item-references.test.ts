// Items a translated backend answered, named again by `item_reference` (as the Responses API lets a client do for
// what it stored): the gateway kept them, unless the request said store: false, for the key that got them, and sends
// the backend the item itself. Through the openai SDK to a chat completions backend, whole and streamed.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { ALICE_KEY, deadBaseURL, keyManifests, startGateway, type TestGateway } from '../helpers/gateway.js';
import { responsesChatManifests } from './manifests.js';
import { ANSWER, WEATHER_TOOL, weatherTurns } from './weather-chat.js';

const BOB_KEY = 'sk-bob-client-key-9876543210';
const PREAMBLE = 'Let me look that up.';

let chat: ScriptedChatUpstream;
let gw: TestGateway;

beforeAll(async () => {
  // Turn 0 says something before its call, as Claude and many chat models do.
  chat = await startScriptedChatUpstream([{ ...weatherTurns[0]!, text: PREAMBLE }, weatherTurns[1]!]);
  gw = await startGateway(
    `${responsesChatManifests(await deadBaseURL(), { 'extra-chat': [['chatCompletions', chat.baseURL]] })}---\n${keyManifests(BOB_KEY, ['extra-chat'], { group: 'bob-team', token: 'bob' })}`,
  );
});

afterAll(async () => {
  await gw?.close();
  await chat?.close();
});

const client = (apiKey = ALICE_KEY) => new OpenAI({ apiKey, baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000 });
const QUESTION = { role: 'user' as const, content: 'Weather in Paris?' };

/** The first turn, whole or streamed: its Response's output (a message, then the call). */
async function firstTurn(stream: boolean, store?: boolean): Promise<OpenAI.Responses.ResponseOutputItem[]> {
  const body = { model: 'extra-chat', input: [QUESTION], tools: [WEATHER_TOOL], ...(store === undefined ? {} : { store }) };
  const response = stream ? await client().responses.stream(body).finalResponse() : await client().responses.create(body);
  expect(response.output.map((i) => i.type)).toEqual(['message', 'function_call']);
  return response.output;
}

/** The second turn's input: the question, a reference to each output item the first turn gave, the call's output. */
function referring(output: readonly OpenAI.Responses.ResponseOutputItem[]): OpenAI.Responses.ResponseInputItem[] {
  return [
    QUESTION,
    ...output.map((i) => ({ type: 'item_reference' as const, id: i.id! })),
    { type: 'function_call_output', call_id: 'call_weather_1', output: '{"forecast":"sunny"}' },
  ];
}

/** The chat messages the backend got for the second turn: the first turn's text and call again, then the output. */
function expectSecondTurnSent() {
  expect(chat.requests.at(-1)!.body!['messages']).toEqual([
    { role: 'user', content: 'Weather in Paris?' },
    {
      role: 'assistant',
      content: PREAMBLE,
      tool_calls: [{ id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
    },
    { role: 'tool', tool_call_id: 'call_weather_1', content: '{"forecast":"sunny"}' },
  ]);
}

describe('item_reference on a route served through chat completions', () => {
  it('to the items of a whole answer: each replaced by the item the gateway kept', async () => {
    const output = await firstTurn(false);
    const second = await client().responses.create({ model: 'extra-chat', input: referring(output), tools: [WEATHER_TOOL] });
    expect(second.output_text).toBe(ANSWER);
    expectSecondTurnSent();
  });

  it('to the items of a streamed answer: kept as the stream completed', async () => {
    const output = await firstTurn(true);
    const second = await client()
      .responses.stream({ model: 'extra-chat', input: referring(output), tools: [WEATHER_TOOL] })
      .finalResponse();
    expect(second.output_text).toBe(ANSWER);
    expectSecondTurnSent();
  });

  it('from another key: nothing found, refused in OpenAI’s shape before any upstream call', async () => {
    const output = await firstTurn(false);
    const asked = chat.requests.length;
    const run = client(BOB_KEY).responses.create({ model: 'extra-chat', input: referring(output), tools: [WEATHER_TOOL] });
    await expect(run).rejects.toMatchObject({
      status: 400,
      error: { type: 'invalid_request_error', param: 'input[1]', message: expect.stringContaining('does not hold') },
    });
    expect(chat.requests.length).toBe(asked);
  });

  it('to an answer given with store: false: not kept, so refused', async () => {
    const output = await firstTurn(false, false);
    await expect(client().responses.create({ model: 'extra-chat', input: referring(output), tools: [WEATHER_TOOL] })).rejects.toMatchObject({
      status: 400,
      error: { param: 'input[1]' },
    });
  });
});
