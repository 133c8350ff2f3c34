// A chat completions answer (not streamed) as an Anthropic Messages answer. Pure. The model's reasoning
// (`reasoning_content` / `reasoning`) is not carried: a thinking block needs a signature only Anthropic can make,
// and Claude Code would send an unsigned one back to whichever backend serves the next turn. Its tokens stay in
// usage (reasoningTokens). A refusal (OpenAI's `message.refusal`, said instead of content) is the answer's text, and
// its stop reason `refusal`, as Anthropic tells one: dropped, it would pass for an empty end_turn.
import { anthropicError } from '../../model/anthropic-errors.js';
import type { Translated } from '../../model/anthropic-errors.js';
import {
  type AnthropicUsage,
  anthropicUsage,
  badToolInputMessage,
  chatUsage,
  messageId,
  type StopContext,
  type StopReason,
  stopReason,
  toolInput,
  toolUseId,
} from './answer-parts.js';

type AnswerBlock = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface MessagesAnswer {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnswerBlock[];
  stop_reason: StopReason;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

export interface AnswerContext extends StopContext {
  /** The model's public name, as the client asked for it. */
  readonly model: string;
}

/** The Messages answer for a chat completion; an api_error (502) when the upstream's answer cannot be one. */
export function chatToMessages(completion: unknown, ctx: AnswerContext): Translated<MessagesAnswer> {
  const c = completion && typeof completion === 'object' ? (completion as Record<string, unknown>) : {};
  const choice = Array.isArray(c['choices']) ? (c['choices'][0] as Record<string, unknown> | undefined) : undefined;
  const message = choice?.['message'];
  if (!choice || !message || typeof message !== 'object') return badGateway('The upstream answer is not a chat completion.');
  const m = message as Record<string, unknown>;

  const content: AnswerBlock[] = [];
  const refusal = typeof m['refusal'] === 'string' ? m['refusal'] : '';
  const text = (typeof m['content'] === 'string' ? m['content'] : '') + refusal;
  if (text) content.push({ type: 'text', text });
  for (const call of Array.isArray(m['tool_calls']) ? (m['tool_calls'] as unknown[]) : []) {
    const fn = (call as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
    const name = typeof fn?.name === 'string' ? fn.name : '';
    const input = toolInput(typeof fn?.arguments === 'string' ? fn.arguments : '');
    if (!input) return badGateway(badToolInputMessage(name));
    content.push({ type: 'tool_use', id: toolUseId((call as { id?: unknown }).id), name, input });
  }

  // A backend that leaves finish_reason out has still finished: the answer is whole.
  const finish = typeof choice['finish_reason'] === 'string' ? choice['finish_reason'] : 'stop';
  const stop = stopReason(finish, ctx, {
    usedTools: content.some((b) => b.type === 'tool_use'),
    refused: refusal !== '',
    matched: choice['stop_reason'],
    textTail: text,
  });
  return {
    ok: true,
    value: {
      id: messageId(c['id']),
      type: 'message',
      role: 'assistant',
      model: ctx.model,
      content,
      stop_reason: stop.reason,
      stop_sequence: stop.sequence,
      usage: anthropicUsage(chatUsage(c['usage'])),
    },
  };
}

function badGateway(message: string): Translated<never> {
  return { ok: false, status: 502, error: anthropicError('api_error', message) };
}
