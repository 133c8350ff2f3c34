// What a whole Messages answer and a Messages stream share on the way to a chat completion: the finish_reason a
// stop_reason means, the chat usage object, and the error an Anthropic error body or event is told as. Pure.
import type { SseError } from '../../dataplane/exchange/transform.js';
import { providerError } from '../../dataplane/upstream/provider-error.js';
import type { Usage } from '../../model/usage.js';

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/**
 * The finish_reason for an Anthropic stop_reason. A `refusal` (the safety classifiers stopped the answer) is
 * content_filter: the text before it stays in `content`, not `refusal`, since it is what the model wrote, not a
 * refusal message, and the openai SDK's `.parse` throws ContentFilterFinishReasonError on it. pause_turn (a server
 * tool's long turn paused) is `stop`: the answer so far is whole, and a chat client has no way to resume it.
 */
export function finishReason(stop: unknown): FinishReason {
  switch (stop) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

/**
 * The chat usage object of the gateway's Usage (read from Anthropic's by messages-usage.ts: its inputTokens already
 * counts cache reads and writes, as prompt_tokens does). cache_write_tokens is in the openai SDK's type and the
 * Vercel AI SDK's schema (OpenRouter's member), so a client can see what the writes cost.
 */
export function chatUsage(u: Usage): ChatUsage {
  return {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    prompt_tokens_details: { cached_tokens: u.cachedInputTokens, cache_write_tokens: u.cacheWriteInputTokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: u.reasoningTokens },
  };
}

/**
 * An Anthropic error (`{"type":"error","error":{"type","message"}}`) in OpenAI's terms: its message, `server_error`
 * (or `invalid_request_error` when Anthropic says so), and Anthropic's type as the code (`overloaded_error`).
 */
export function upstreamError(body: unknown): SseError | undefined {
  const e = providerError(500, body);
  if (!e) return undefined;
  const kind = e.type === 'invalid_request_error' ? 'invalid_request_error' : 'server_error';
  return { message: e.message, type: kind, code: e.code ?? e.type };
}
