// A scripted two-step conversation for the Messages API tests: the user asks for the weather, the model calls a tool,
// and after its result answers; as Anthropic's turns (for a native backend's fake) and as chat's (a translated one's).
import type { AnthropicTurn } from '../fakes/anthropic-upstream.js';
import type { ChatTurn } from '../fakes/scripted-chat-upstream.js';

export const TOOL = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
};
export const QUESTION = { role: 'user' as const, content: 'What is the weather in Paris?' };

export const anthropicTurns: AnthropicTurn[] = [
  {
    content: [
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'toolu_w1', name: 'get_weather', input: { city: 'Paris' } },
    ],
    stop_reason: 'tool_use',
    usage: { input_tokens: 120, output_tokens: 30, cache_read_input_tokens: 40, cache_creation_input_tokens: 8 },
  },
  {
    content: [{ type: 'text', text: 'It is sunny in Paris.' }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 150, output_tokens: 9, cache_read_input_tokens: 160, cache_creation_input_tokens: 0 },
  },
];

export const chatTurns: ChatTurn[] = [
  {
    text: 'Let me check.',
    toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    finish: 'tool_calls',
    usage: { prompt_tokens: 160, completion_tokens: 30, cached_tokens: 40 },
  },
  { text: 'It is sunny in Paris.', finish: 'stop', usage: { prompt_tokens: 190, completion_tokens: 9, cached_tokens: 0 } },
];
