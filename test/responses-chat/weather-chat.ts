// A two-turn conversation with one function tool, as a chat completions backend plays it (scripted-chat-upstream.ts):
// turn 0 calls get_weather, turn 1 answers with text. Each turn reports its own usage, cached tokens included.
import type { ChatTurn } from '../fakes/scripted-chat-upstream.js';

export const WEATHER_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city.',
  strict: false,
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

export const ANSWER = 'Sunny in Paris.';

export const weatherTurns: ChatTurn[] = [
  {
    toolCalls: [{ id: 'call_weather_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    finish: 'tool_calls',
    usage: { prompt_tokens: 50, completion_tokens: 10, cached_tokens: 20 },
  },
  { text: ANSWER, finish: 'stop', usage: { prompt_tokens: 80, completion_tokens: 6, cached_tokens: 40 } },
];

/** What the gateway records for turn i: the backend's own report. */
export function recorded(i: number) {
  const u = weatherTurns[i]!.usage;
  return { inputTokens: u.prompt_tokens, cachedInputTokens: u.cached_tokens, outputTokens: u.completion_tokens, estimated: false };
}

/** The Response usage for turn i. */
export function responseUsage(i: number) {
  const u = weatherTurns[i]!.usage;
  return {
    input_tokens: u.prompt_tokens,
    input_tokens_details: { cached_tokens: u.cached_tokens },
    output_tokens: u.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.prompt_tokens + u.completion_tokens,
  };
}
