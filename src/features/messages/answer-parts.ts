// What a chat completions answer and its stream share on the way to the Messages shape: the stop reason, the
// usage, the message id, tool input and the text of an event. Pure.
import type { Usage } from '../../model/usage.js';

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

/** Anthropic's usage object: input_tokens excludes what was read from the prompt cache. */
export interface AnthropicUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

export interface StopContext {
  /** The request's stop_sequences. */
  readonly stopSequences?: readonly string[] | undefined;
}

/**
 * The stop reason and sequence for a chat finish_reason. An answer the model refused (OpenAI's `refusal`) is
 * `refusal` whatever the finish_reason (OpenAI says `stop` there). A `stop` with tool calls in the answer is `tool_use`
 * (some backends say `stop` there, and an Anthropic client runs tools only on `tool_use`). Otherwise a `stop` is `stop_sequence` only when the request had stop
 * sequences and the upstream says which one matched (vLLM's `stop_reason` on the choice) or the text ends on one
 * (a backend that keeps it in the output); OpenAI says neither, and then it is `end_turn`.
 */
export function stopReason(
  finish: string,
  ctx: StopContext,
  answer: { readonly usedTools: boolean; readonly refused: boolean; readonly matched: unknown; readonly textTail: string },
): { reason: StopReason; sequence: string | null } {
  if (answer.refused) return { reason: 'refusal', sequence: null };
  if (answer.usedTools && finish === 'stop') return { reason: 'tool_use', sequence: null };
  switch (finish) {
    case 'length':
      return { reason: 'max_tokens', sequence: null };
    case 'tool_calls':
    case 'function_call':
      return { reason: 'tool_use', sequence: null };
    case 'content_filter':
      return { reason: 'refusal', sequence: null };
  }
  const sequences = ctx.stopSequences ?? [];
  const { matched, textTail } = answer;
  const hit = typeof matched === 'string' && sequences.includes(matched) ? matched : sequences.find((s) => s && textTail.endsWith(s));
  return hit ? { reason: 'stop_sequence', sequence: hit } : { reason: 'end_turn', sequence: null };
}

/**
 * The gateway's Usage from a chat `usage` object; undefined when there is none. inputTokens includes cached tokens
 * and cache writes (`prompt_tokens_details.cache_write_tokens`: in OpenAI's types, and in chat-claude's completion).
 */
export function chatUsage(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const r = u as Record<string, unknown>;
  const inputTokens = count(r['prompt_tokens']);
  const outputTokens = count(r['completion_tokens']);
  const cachedInputTokens = Math.min(count(detail(r['prompt_tokens_details'], 'cached_tokens')), inputTokens);
  const writes = Math.min(count(detail(r['prompt_tokens_details'], 'cache_write_tokens')), inputTokens - cachedInputTokens);
  return {
    inputTokens,
    outputTokens,
    cachedInputTokens,
    ...(writes > 0 ? { cacheWriteInputTokens: writes } : {}),
    reasoningTokens: Math.min(count(detail(r['completion_tokens_details'], 'reasoning_tokens')), outputTokens),
    estimated: false,
  };
}

/** Usage in Anthropic's shape, whose input_tokens leaves out cache reads and writes. */
export function anthropicUsage(u: Usage | undefined): AnthropicUsage {
  const cached = u?.cachedInputTokens ?? 0;
  const writes = u?.cacheWriteInputTokens ?? 0;
  return {
    input_tokens: (u?.inputTokens ?? 0) - cached - writes,
    cache_creation_input_tokens: writes,
    cache_read_input_tokens: cached,
    output_tokens: u?.outputTokens ?? 0,
  };
}

/** `msg_` and the upstream's id (its `chatcmpl-` prefix dropped), or a fresh one when the upstream gave none. */
export function messageId(upstreamId: unknown): string {
  const id = typeof upstreamId === 'string' && upstreamId ? upstreamId.replace(/^chatcmpl-/, '') : crypto.randomUUID().replaceAll('-', '');
  return `msg_${id}`;
}

/** A tool call id, or a fresh `toolu_` one for a backend that sends none (Anthropic's tool_result must name one). */
export function toolUseId(id: unknown): string {
  return typeof id === 'string' && id ? id : `toolu_${crypto.randomUUID().replaceAll('-', '')}`;
}

/**
 * Tool arguments as a tool_use input. The rule for arguments that are not a JSON object: the answer fails with an
 * api_error naming the tool, since running a tool on input the model did not write (`{}`, a guess) could do harm
 * and a retry is safe. Empty arguments are `{}`: backends send "" for a tool without parameters.
 */
export function toolInput(args: string): Record<string, unknown> | undefined {
  if (!args.trim()) return {};
  try {
    const v: unknown = JSON.parse(args);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function badToolInputMessage(name: string): string {
  return `The model called the tool \`${name}\` with arguments that are not a JSON object.`;
}

function detail(details: unknown, key: string): unknown {
  return details && typeof details === 'object' ? (details as Record<string, unknown>)[key] : undefined;
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : 0;
}

/** One event of a Messages stream as its text: `event: <type>`, then its data as JSON. */
export function sseEvent(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}
