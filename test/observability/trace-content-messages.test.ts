// Recorded content (--trace-content) of Anthropic's Messages API, read from what a loopback OTLP receiver decodes, with
// @anthropic-ai/sdk as the client: the prompt (system apart, tool calls and their results) and the answer, whole or
// assembled from a stream's content_block_delta events (tool input too), on the server span and the attempt, in the
// GenAI JSON shape chat's content has; for a native backend (Anthropic's API, Claude on Bedrock, its event stream
// decoded) and a translated one; the backends' credentials masked.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tracing } from '../../src/features/tracing/tracing.js';
import { type AnthropicTurn, type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { type BedrockClaude, startBedrockClaude } from '../fakes/bedrock-claude.js';
import { type OtlpReceiver, startOtlpReceiver } from '../fakes/otlp-receiver.js';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { attributeJson, spansOfRequest, tracingWith } from '../helpers/tracing.js';
import { KEYS, messagesManifests } from '../messages/manifests.js';
import { anthropicTurns, chatTurns, QUESTION, TOOL } from '../messages/weather-conversation.js';

const AWS = { accessKeyId: 'AKIAEXAMPLETRACING01', secretAccessKey: 'trace/content/test/secret/key/0123456789' };
const SYSTEM = 'You forecast weather.';
// The second step's answer echoes the backend's own key: the recorded answer must not hold it.
const TURNS: AnthropicTurn[] = [
  anthropicTurns[0]!,
  { ...anthropicTurns[1]!, content: [{ type: 'text', text: `Sunny. (served with ${KEYS.anthropicUpstream})` }] },
];

/** The first step's answer as recorded content, from any backend: its text and tool call (ids as the backend gave them). */
const toolCallAnswer = (id: string) => [
  {
    role: 'assistant',
    parts: [
      { type: 'text', content: 'Let me check.' },
      { type: 'tool_call', id, name: 'get_weather', arguments: { city: 'Paris' } },
    ],
    finish_reason: 'tool_call',
  },
];
const QUESTION_PARTS = { role: 'user', parts: [{ type: 'text', content: QUESTION.content }] };

let anthropic: AnthropicUpstream;
let chat: ScriptedChatUpstream;
let bedrock: BedrockClaude;
let receiver: OtlpReceiver;
let tracing: Tracing;
let gw: TestGateway;

beforeAll(async () => {
  anthropic = await startAnthropicUpstream(TURNS);
  chat = await startScriptedChatUpstream(chatTurns);
  bedrock = await startBedrockClaude({ region: 'us-west-2', credentials: AWS, turns: TURNS, sliceBytes: 5 });
  receiver = await startOtlpReceiver();
  tracing = tracingWith(receiver, {}, true);
  const manifests = messagesManifests({
    anthropic: anthropic.baseURL,
    chat: chat.baseURL,
    clouds: { aws: AWS },
    extra: { 'claude-x-bedrock': ['bedrock', bedrock.origin] },
  });
  gw = await startGateway(manifests, { tracing });
});

afterAll(async () => {
  await gw?.close();
  await tracing?.shutdown();
  await Promise.all([receiver, anthropic, chat, bedrock].map((f) => f?.close()));
});

const client = () => new Anthropic({ apiKey: KEYS.alice, baseURL: gw.origin, maxRetries: 0, timeout: 10_000 });

/** Asks, streamed (the SDK assembles the message) or not, and returns the spans of the request. */
async function spansOf(model: string, stream: boolean, messages: Anthropic.MessageParam[] = [QUESTION]) {
  const params = { model, max_tokens: 256, system: SYSTEM, tools: [TOOL], messages };
  let response: Response;
  if (stream) {
    const s = client().messages.stream(params);
    ({ response } = await s.withResponse());
    await s.finalMessage();
  } else ({ response } = await client().messages.create(params).withResponse());
  return spansOfRequest(receiver, response.headers.get('x-request-id')!);
}

describe.each([false, true])('recorded content of a Messages exchange, stream %s', (stream) => {
  it('native: system apart, the prompt, and the answer’s text and tool call', async () => {
    for (const span of await spansOf('claude-native', stream)) {
      expect(attributeJson(span, 'gen_ai.system_instructions'), span.name).toEqual([{ type: 'text', content: SYSTEM }]);
      expect(attributeJson(span, 'gen_ai.input.messages'), span.name).toEqual([QUESTION_PARTS]);
      expect(attributeJson(span, 'gen_ai.output.messages'), span.name).toEqual(toolCallAnswer('toolu_w1'));
    }
  });

  it('native: the tool call and its result in the prompt; the backend’s key masked in the prompt and the answer', async () => {
    const history: Anthropic.MessageParam[] = [
      QUESTION,
      { role: 'assistant', content: TURNS[0]!.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_w1', content: `rain (looked up with ${KEYS.anthropicUpstream})` }] },
    ];
    const masked = '*'.repeat(KEYS.anthropicUpstream.length);
    for (const span of await spansOf('claude-native', stream, history)) {
      expect(JSON.stringify(span.attributes)).not.toContain(KEYS.anthropicUpstream);
      expect(attributeJson(span, 'gen_ai.input.messages'), span.name).toEqual([
        QUESTION_PARTS,
        toolCallAnswer('toolu_w1').map(({ finish_reason: _, ...m }) => m)[0],
        { role: 'user', parts: [{ type: 'tool_call_response', id: 'toolu_w1', response: `rain (looked up with ${masked})` }] },
      ]);
      expect(attributeJson(span, 'gen_ai.output.messages'), span.name).toEqual([
        { role: 'assistant', parts: [{ type: 'text', content: `Sunny. (served with ${masked})` }], finish_reason: 'stop' },
      ]);
    }
  });

  it('Claude on Bedrock: the answer read from the event stream decoded into Anthropic’s events', async () => {
    for (const span of await spansOf('claude-x-bedrock', stream)) {
      expect(attributeJson(span, 'gen_ai.system_instructions'), span.name).toEqual([{ type: 'text', content: SYSTEM }]);
      expect(attributeJson(span, 'gen_ai.output.messages'), span.name).toEqual(toolCallAnswer('toolu_w1'));
    }
  });

  it('translated: the prompt as the chat backend got it (system first), the answer as the client got it', async () => {
    for (const span of await spansOf('claude-translated', stream)) {
      expect(attributeJson(span, 'gen_ai.input.messages'), span.name).toEqual([{ role: 'system', parts: [{ type: 'text', content: SYSTEM }] }, QUESTION_PARTS]);
      expect(attributeJson(span, 'gen_ai.output.messages'), span.name).toEqual(toolCallAnswer('call_w1'));
    }
  });
});
