// A two-turn weather conversation as an Anthropic backend answers it (a tool call, then the answer), and what the
// gateway records of each turn: the usage the backend reported, input counting its cache reads and writes.
import type OpenAI from 'openai';
import type { AnthropicTurn } from '../fakes/anthropic-upstream.js';

export const WEATHER_TOOL: OpenAI.ChatCompletionFunctionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

export const claudeTurns: AnthropicTurn[] = [
  {
    content: [
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'toolu_weather_1', name: 'get_weather', input: { city: 'Paris' } },
    ],
    stop_reason: 'tool_use',
    usage: { input_tokens: 120, output_tokens: 30, cache_read_input_tokens: 40, cache_creation_input_tokens: 8 },
  },
  {
    content: [{ type: 'text', text: 'It is 18°C and sunny in Paris.' }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 170, output_tokens: 12, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  },
];

/** What the gateway records of turn i (from the access line). */
export function recordedClaude(i: number) {
  const u = claudeTurns[i]!.usage;
  return {
    inputTokens: u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
    cachedInputTokens: u.cache_read_input_tokens,
    ...(u.cache_creation_input_tokens > 0 ? { cacheWriteInputTokens: u.cache_creation_input_tokens } : {}),
    outputTokens: u.output_tokens,
    estimated: false,
  };
}

export const QUESTION: OpenAI.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'What is the weather in Paris?' },
];

/** A turn that thinks (with the signature Anthropic sends) before it answers. */
export const THINKING = 'Six by seven is forty-two.';
export const thinkingTurn: AnthropicTurn = {
  content: [
    { type: 'thinking', thinking: THINKING, signature: 'EqQBCgIYAhIMsignature' },
    { type: 'text', text: 'It is 42.' },
  ],
  stop_reason: 'end_turn',
  usage: { input_tokens: 30, output_tokens: 25, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
};

/** The `error` event Anthropic sends when it is overloaded mid-stream. */
export const OVERLOADED = { type: 'overloaded_error', message: 'Overloaded' };
