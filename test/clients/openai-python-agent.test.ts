// openai-python's typed helpers against the gateway on loopback fakes (test/clients/openai_python_agent.py): raw
// responses with their headers, structured parsing with a pydantic model and a strict function tool, the Responses
// stream helper on a function call, and responses.parse. The SDK parses and validates each answer into its models,
// so a shape or header the gateway gets wrong fails here. The venv is scripts/py-clients.mjs's; without it this fails.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs helper shared with scripts/run-tests.mjs
import { ensurePythonClients, PYTHON } from '../../scripts/py-clients.mjs';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { type ScriptedResponsesUpstream, startScriptedResponsesUpstream } from '../fakes/scripted-responses-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatTurns } from '../messages/weather-conversation.js';
import { REPO_ROOT } from '../support/spawn-cli.js';

const KEY = 'sk-python-agent-client-0123456789';
const CITY = { city: 'Paris', temperatureC: 21, conditions: ['sunny', 'breezy'] };
const responsesUsage = { inputTokens: 70, cachedInputTokens: 0, outputTokens: 12, reasoningTokens: 0 };

let chatObject: ScriptedChatUpstream;
let chatTools: ScriptedChatUpstream;
let responses: ScriptedResponsesUpstream;
let gw: TestGateway;
let seen: Record<string, any>;

const route = (name: string, baseURL: string, endpoints: string) => `---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: ${name}}
spec:
  model: ${name}
  endpoints: [${endpoints}]
  backends:
  - {name: up, baseURL: "${baseURL}", model: upstream-${name}}
`;

beforeAll(async () => {
  expect(ensurePythonClients(), 'the Python clients could not be installed (see the log above)').toBe(true);
  chatObject = await startScriptedChatUpstream([
    { text: JSON.stringify(CITY), finish: 'stop', usage: { prompt_tokens: 80, completion_tokens: 20, cached_tokens: 0 } },
  ]);
  chatTools = await startScriptedChatUpstream(chatTurns);
  responses = await startScriptedResponsesUpstream([
    { output: [{ type: 'function_call', name: 'get_weather', callId: 'call_py_1', arguments: '{"city":"Paris"}' }], usage: responsesUsage },
    { output: [{ type: 'message', text: JSON.stringify(CITY) }], usage: responsesUsage },
  ]);
  gw = await startGateway(`
apiVersion: v1
kind: Secret
metadata: {name: client}
stringData: {token: ${KEY}}
${route('object', chatObject.baseURL, 'chat.completions')}${route('tools', chatTools.baseURL, 'chat.completions')}${route('responses', responses.baseURL, 'responses')}---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: agents}
spec: {models: ["*"]}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: agent}
spec: {group: agents, secretRef: {name: client, key: token}}
`);
  // Asynchronously: the fakes and the gateway live in this process and must keep answering meanwhile.
  // The bound is for a machine under load (the interpreter and the SDK's imports take most of a run); alone it is ~3 s.
  const run = await promisify(execFile)(PYTHON, [join(REPO_ROOT, 'test/clients/openai_python_agent.py'), `${gw.origin}/v1`, KEY], { timeout: 90_000 });
  seen = JSON.parse(run.stdout);
}, 120_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([chatObject?.close(), chatTools?.close(), responses?.close()]);
});

/** The value a call returned; fails with what the SDK raised instead. */
function value(name: string): any {
  expect(seen[name], JSON.stringify(seen[name])).toMatchObject({ ok: true });
  return seen[name].value;
}

describe('openai-python helpers through the gateway', () => {
  it('with_raw_response: the status, the JSON content type and the x-request-id the parsed object reports', () => {
    const r = value('raw');
    expect(r).toMatchObject({ status: 200, content: JSON.stringify(CITY) });
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.request_id).toBe(r.headers['x-request-id']);
    expect(r.headers).toMatchObject({ 'x-model-gateway-backend': 'up', 'x-model-gateway-attempts': '1' });
    // with_streaming_response: the headers are there before the body is read, and the stream parses.
    expect(r.stream_headers['content-type']).toMatch(/^text\/event-stream/);
    expect(r.stream_headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.stream_chunks).toBeGreaterThan(1);
  });

  it('beta.chat.completions.parse: a pydantic model from a json_schema answer', () => {
    expect(value('parse')).toEqual(CITY);
    const sent = chatObject.requests.find((q) => q.body['response_format'])!.body;
    expect(sent['response_format']).toMatchObject({ type: 'json_schema', json_schema: { name: 'City', strict: true } });
  });

  it('chat.completions.parse with a strict function tool: the arguments parsed into the model', () => {
    expect(value('parse_tool')).toEqual({ name: 'get_weather', parsed: { city: 'Paris' }, finish: 'tool_calls' });
    expect(chatTools.requests[0]!.body['tools'][0]).toMatchObject({ type: 'function', function: { name: 'get_weather', strict: true } });
  });

  it('responses.stream on a function call: every event read, the final response has the call, a sealed id and the usage', () => {
    const r = value('responses_stream_tool');
    expect(r.events).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(r).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: { city: 'Paris' } });
    expect(r.usage).toMatchObject({ input_tokens: 70, output_tokens: 12 });
    // The upstream's resp_1, sealed: the id a follow-up call must name.
    expect(r.id).toMatch(/^resp_/);
    expect(r.id).not.toBe('resp_1');
  });

  it('responses.parse: the pydantic model from the output text', () => {
    const r = value('responses_parse');
    expect(r.parsed).toEqual(CITY);
    expect(responses.requests[1]!.body).toMatchObject({ text: { format: { type: 'json_schema', name: 'City', strict: true } } });
    expect(responses.requests[1]!.body['stream']).toBeUndefined();
  });
});
