// Translation refusals and upstream (OpenAI-shaped) errors in Anthropic's error shape (model/anthropic-errors.ts).
// Pure.

import { providerError } from '../../dataplane/upstream/provider-error.js';
import { type AnthropicErrorBody, anthropicError, errorTypeForStatus, type Translated } from '../../model/anthropic-errors.js';

/** A refusal of the client's request: 400 invalid_request_error, as Anthropic answers one. */
export function invalidRequest(message: string): Translated<never> {
  return { ok: false, status: 400, error: anthropicError('invalid_request_error', message) };
}

/**
 * An upstream's error answer (OpenAI's `{"error":{"message",…}}`, or anything else) in Anthropic's shape. The
 * type follows the status; the message is the upstream's when it gave one, else a sentence naming the status.
 */
export function errorFromUpstream(status: number, body: unknown): AnthropicErrorBody {
  return anthropicError(errorTypeForStatus(status), upstreamMessage(body) ?? `The upstream answered with status ${status}.`);
}

/**
 * The message of a provider's error body (OpenAI's, Bedrock's {"message"} or {"Message"}, Google's, Azure's:
 * providerError reads them all), or of a text body, cut to its first 500 characters (a proxy's HTML error page is
 * no message).
 */
export function upstreamMessage(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return typeof body === 'string' && body.trim() ? body.trim().slice(0, 500) : undefined;
  return providerError(0, body)?.message;
}
