// An anthropic backend's error answer to a translated chat request, retold in OpenAI's error shape with its status
// kept (and its retry-after: the OpenAI SDKs retry a 429 and any 5xx, Anthropic's 529 overloaded too). Anthropic's
// `{"type":"error","error":{"type","message"}}` becomes `{"error":{"message","type","param","code"}}`, its type
// kept as the code; any other body (a cloud's own shape) is passed on for the data plane's retelling.
import type { AnswerHandler } from '../../dataplane/exchange/transform.js';
import { OpenAiErrorBody, type ToOpenAiError } from '../../dataplane/upstream/openai-error-body.js';

/** OpenAI's error type for Anthropic's. */
const OPENAI_TYPES: Readonly<Record<string, string>> = {
  invalid_request_error: 'invalid_request_error',
  request_too_large: 'invalid_request_error',
  authentication_error: 'authentication_error',
  permission_error: 'permission_error',
  not_found_error: 'invalid_request_error',
  rate_limit_error: 'rate_limit_error',
  api_error: 'server_error',
  overloaded_error: 'server_error',
};

/** Anthropic's error body as OpenAI's error; undefined when the body is not Anthropic's. */
const openAiErrorOf: ToOpenAiError = (body) => {
  const e = (body as { type?: unknown; error?: { type?: unknown; message?: unknown } } | null) ?? undefined;
  if (e?.type !== 'error' || typeof e.error?.type !== 'string' || typeof e.error.message !== 'string') return undefined;
  const code = e.error.type === 'rate_limit_error' ? 'rate_limit_exceeded' : e.error.type;
  return { message: e.error.message, type: OPENAI_TYPES[e.error.type] ?? 'server_error', code };
};

/** The handler for an anthropic backend's error answer to an OpenAI client. */
export function claudeErrorAnswer(headers: Record<string, string | string[] | undefined>): AnswerHandler {
  return new OpenAiErrorBody(headers, openAiErrorOf);
}
