// A whole Messages answer (not streamed) as a chat completion. Pure. Text blocks are joined into `content` (null
// when there is none and there are tool calls); tool_use blocks become `tool_calls`, keeping Anthropic's toolu_ ids
// (the client sends them back as tool_call_id); thinking blocks become `reasoning_content`, as DeepSeek and vLLM
// give reasoning. Dropped: redacted_thinking (encrypted, nothing to read) and server tool blocks (server_tool_use,
// web_search_tool_result…): the upstream ran those tools itself and the chat shape has no place for their results;
// the text the model wrote from them is kept. A body that is not a Messages answer throws NotAMessagesAnswer, a
// GatewayError: the wiring answers it as any GatewayError, a 502 in OpenAI's shape.
import { GatewayError } from '../../model/errors.js';
import type { Usage } from '../../model/usage.js';
import { toolUseId } from '../messages/answer-parts.js';
import { messageUsage } from '../messages/messages-usage.js';
import { isRecord } from '../../model/translation.js';
import type { CompletionContext } from './completion-context.js';
import { type ChatUsage, chatUsage, type FinishReason, finishReason, upstreamError } from './completion-parts.js';

export class NotAMessagesAnswer extends GatewayError {
  constructor(body: unknown) {
    const upstream = upstreamError(body)?.message;
    super(502, upstream ? `The upstream answered with an error: ${upstream}` : 'The upstream answer is not a Messages answer.', { code: 'upstream_error' });
    this.name = 'NotAMessagesAnswer';
  }
}

interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A type alias, not an interface, so that it is a Record<string, unknown> too. */
export type CompletionObject = {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: [
    {
      index: 0;
      message: {
        role: 'assistant';
        content: string | null;
        refusal: null;
        reasoning_content?: string;
        tool_calls?: ToolCall[];
        annotations: never[];
      };
      finish_reason: FinishReason;
      logprobs: null;
    },
  ];
  usage?: ChatUsage;
};

/** The chat completion for a whole Messages answer, and the usage it reported (undefined when it reported none). */
export function messagesToCompletion(message: unknown, ctx: CompletionContext): { completion: CompletionObject; usage: Usage | undefined } {
  if (!isRecord(message) || message['type'] !== 'message' || !Array.isArray(message['content'])) throw new NotAMessagesAnswer(message);

  let text = '';
  let reasoning = '';
  const calls: ToolCall[] = [];
  for (const block of message['content'] as unknown[]) {
    if (!isRecord(block)) continue;
    if (block['type'] === 'text' && typeof block['text'] === 'string') text += block['text'];
    else if (block['type'] === 'thinking' && typeof block['thinking'] === 'string') reasoning += block['thinking'];
    else if (block['type'] === 'tool_use') calls.push(toolCall(block));
  }

  const usage = messageUsage(message['usage']);
  const completion: CompletionObject = {
    id: ctx.id,
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text === '' && calls.length > 0 ? null : text,
          refusal: null,
          ...(reasoning ? { reasoning_content: reasoning } : {}),
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
          annotations: [],
        },
        finish_reason: finishReason(message['stop_reason']),
        logprobs: null,
      },
    ],
    ...(usage ? { usage: chatUsage(usage) } : {}),
  };
  return { completion, usage };
}

function toolCall(block: Record<string, unknown>): ToolCall {
  const input = block['input'];
  return {
    id: toolUseId(block['id']),
    type: 'function',
    function: { name: typeof block['name'] === 'string' ? block['name'] : '', arguments: JSON.stringify(input ?? {}) },
  };
}
