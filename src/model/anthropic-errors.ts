// Anthropic's error shape, `{"type":"error","error":{"type","message"}}`: what a Messages API client (Anthropic's
// SDKs, Claude Code) reads. The gateway's own refusals on that API and upstream errors retold to it take this
// shape; the type follows the HTTP status as Anthropic's own table does. Pure.

export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error';

export interface AnthropicErrorBody {
  readonly type: 'error';
  readonly error: { readonly type: AnthropicErrorType; readonly message: string };
}

/** The outcome of a translation that may refuse: the value, or the error to answer with (its HTTP status too). */
export type Translated<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly status: number; readonly error: AnthropicErrorBody };

export function anthropicError(type: AnthropicErrorType, message: string): AnthropicErrorBody {
  return { type: 'error', error: { type, message } };
}

/** Anthropic's error type for an HTTP status (its documented table; 503 is how OpenAI-shaped upstreams say overloaded). */
export function errorTypeForStatus(status: number): AnthropicErrorType {
  switch (status) {
    case 400:
    case 422:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    case 408: // a model that timed out, or failed mid-answer (Bedrock's 424): not the request's fault
    case 424:
      return 'api_error';
    default:
      return status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error';
  }
}
