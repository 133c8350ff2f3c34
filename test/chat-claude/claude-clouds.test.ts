// Chat completions from the openai SDK to Claude on Amazon Bedrock (InvokeModel, SigV4, the stream as AWS
// event-stream frames in 7-byte slices) and on Vertex AI (rawPredict with a Google access token), with the routes of
// docs/providers.md (examples/providers/claude-*.yaml) pointed at loopback fakes of the clouds, which refuse a body
// laid out wrongly (`model` left in, no anthropic_version); and a Responses stream to Claude on Bedrock, through
// chat to the Messages API and back, on each cloud (Vertex's through streamRawPredict with a Google access token).
// The usage recorded is what the cloud reported.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BedrockClaude, startBedrockClaude } from '../fakes/bedrock-claude.js';
import { type GoogleServiceAccount, startGoogleServiceAccount } from '../fakes/google-service-account.js';
import { startVertexClaude, type VertexClaude } from '../fakes/vertex-claude.js';
import { ALICE_KEY, startGateway, type TestGateway } from '../helpers/gateway.js';
import { recipe } from '../providers/recipe-setup.js';
import { claudeTurns, QUESTION, recordedClaude, WEATHER_TOOL } from './weather-claude.js';

const VERTEX_BASE = '/v1/projects/my-project/locations/us-east5/publishers/anthropic/models';
const BEDROCK_KEYS = { accessKeyId: 'AKIAEXAMPLEGATEWAY01', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };

let google: GoogleServiceAccount;
let vertex: VertexClaude;
let bedrock: BedrockClaude;
let vertexGw: TestGateway;
let bedrockGw: TestGateway;

beforeAll(async () => {
  google = await startGoogleServiceAccount();
  vertex = await startVertexClaude({ basePath: VERTEX_BASE, validToken: (t) => google.tokens.valid(t), turns: claudeTurns });
  bedrock = await startBedrockClaude({ region: 'us-west-2', credentials: BEDROCK_KEYS, turns: claudeTurns, sliceBytes: 7 });
  vertexGw = await startGateway(
    recipe('claude-vertex.yaml', {
      origin: new URL(vertex.baseURL).origin,
      edit: (docs) => {
        for (const d of docs) if (d.kind === 'Secret') d.stringData!['key.json'] = google.keyJson;
      },
    }).yaml,
  );
  bedrockGw = await startGateway(recipe('claude-bedrock.yaml', { origin: bedrock.origin }).yaml);
});

afterAll(async () => {
  await Promise.all([vertexGw, bedrockGw].map((g) => g?.close()));
  await Promise.all([vertex, bedrock].map((f) => f?.close()));
  await google?.close();
});

const client = (gw: TestGateway) => new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000 });

describe('chat completions on Claude on Amazon Bedrock', () => {
  it('a stream through InvokeModelWithResponseStream, signed, its event stream decoded and translated', async () => {
    const stream = client(bedrockGw).chat.completions.stream({ model: 'claude-sonnet-4-5-bedrock', messages: QUESTION, tools: [WEATHER_TOOL] });
    const done = await stream.finalChatCompletion();
    expect(bedrock.refused).toEqual([]);
    const sent = bedrock.requests.at(-1)!;
    expect(sent).toMatchObject({ modelId: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', operation: 'invoke-with-response-stream' });
    expect(sent.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', system: 'Be brief.', max_tokens: 4096 });
    expect(sent.body['model']).toBeUndefined();
    expect(done.choices[0]!.message).toMatchObject({
      content: 'Let me check.',
      tool_calls: [{ id: 'toolu_weather_1', function: { arguments: '{"city":"Paris"}' } }],
    });
    expect(await bedrockGw.record(String(sent.headers['x-request-id']))).toMatchObject({ status: 200, family: 'chat.completions', ...recordedClaude(0) });
  });
});

describe('the Responses API on Claude on Amazon Bedrock', () => {
  it('a Responses stream through InvokeModelWithResponseStream: the event stream decoded, translated twice, the usage as reported', async () => {
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: WEATHER_TOOL.function.parameters!, strict: false }];
    const stream = client(bedrockGw).responses.stream({
      model: 'claude-sonnet-4-5-bedrock',
      instructions: 'Be brief.',
      input: 'What is the weather in Paris?',
      tools,
    });
    const done = await stream.finalResponse();
    expect(bedrock.refused).toEqual([]);
    const sent = bedrock.requests.at(-1)!;
    expect(sent).toMatchObject({ modelId: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', operation: 'invoke-with-response-stream' });
    expect(sent.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', system: 'Be brief.', max_tokens: 4096 });
    expect(done.output_text).toBe('Let me check.');
    expect(done.output.find((o) => o.type === 'function_call')).toMatchObject({ call_id: 'toolu_weather_1', arguments: '{"city":"Paris"}' });
    expect(done.usage).toMatchObject({ input_tokens: 168, output_tokens: 30 });
    expect(await bedrockGw.record(String(sent.headers['x-request-id']))).toMatchObject({ status: 200, family: 'responses', ...recordedClaude(0) });
  });
});

describe('chat completions on Claude on Vertex AI', () => {
  it('a whole answer through rawPredict with a Google access token', async () => {
    const r = await client(vertexGw).chat.completions.create({ model: 'claude-sonnet-4-5-vertex', messages: QUESTION, tools: [WEATHER_TOOL] });
    expect(vertex.refused).toEqual([]);
    const sent = vertex.requests.at(-1)!;
    expect(sent).toMatchObject({ model: 'claude-sonnet-4-5@20250929', specifier: 'rawPredict' });
    expect(sent.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', system: 'Be brief.' });
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
    expect(r.usage).toMatchObject({ prompt_tokens: 168, completion_tokens: 30 });
    expect(await vertexGw.record(String(sent.headers['x-request-id']))).toMatchObject({ status: 200, ...recordedClaude(0) });
  });
});

describe('the Responses API on Claude on Vertex AI', () => {
  it('a Responses stream through streamRawPredict with a Google access token: translated twice, the usage as reported', async () => {
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: WEATHER_TOOL.function.parameters!, strict: false }];
    const stream = client(vertexGw).responses.stream({
      model: 'claude-sonnet-4-5-vertex',
      instructions: 'Be brief.',
      input: 'What is the weather in Paris?',
      tools,
    });
    let text = '';
    stream.on('response.output_text.delta', (e) => {
      text += e.delta;
    });
    const done = await stream.finalResponse();
    expect(vertex.refused).toEqual([]);
    const sent = vertex.requests.at(-1)!;
    expect(sent).toMatchObject({ model: 'claude-sonnet-4-5@20250929', specifier: 'streamRawPredict' });
    expect(sent.headers['authorization']).toMatch(/^Bearer /);
    expect(sent.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', system: 'Be brief.', stream: true });
    expect(sent.body['model']).toBeUndefined();
    expect(text).toBe('Let me check.');
    expect(done.output.find((o) => o.type === 'function_call')).toMatchObject({ call_id: 'toolu_weather_1', arguments: '{"city":"Paris"}' });
    expect(done.usage).toMatchObject({ input_tokens: 168, output_tokens: 30, input_tokens_details: { cached_tokens: 40 } });
    expect(await vertexGw.record(String(sent.headers['x-request-id']))).toMatchObject({ status: 200, family: 'responses', ...recordedClaude(0) });
  });
});
