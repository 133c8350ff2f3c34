// The message in a provider's error body, whatever its shape, so that a client told the error in its own API's shape
// still reads why the provider refused: OpenAI's and Azure's `{"error":{"message","type","code"}}`, Google's
// `{"error":{"code","message","status"}}` (Vertex sometimes as a one-element array), Bedrock's `{"message"}` (or
// `{"Message"}`, its kind in the x-amzn-ErrorType header), Azure API Management's `{"statusCode","message"}`. Pure.
import type { IncomingHttpHeaders } from 'node:http';
import type { SseError } from '../exchange/transform.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

/** The OpenAI type an upstream status stands for when the body names none. */
export function typeForStatus(status: number): string {
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

/** Whether the OpenAI SDKs read this body's message themselves: `{"error":{"message": "…"}}`. */
export function isOpenAiError(body: unknown): boolean {
  return isObject(body) && isObject(body['error']) && text(body['error']['message']) !== undefined;
}

/** The error object of a body: its `error` member, or the body itself (Bedrock's, Azure API Management's). */
function errorObject(body: unknown): Json | undefined {
  const one = Array.isArray(body) && body.length === 1 ? body[0] : body; // Vertex: [{"error":{…}}]
  if (!isObject(one)) return undefined;
  if (isObject(one['error'])) return one['error'];
  if (text(one['error'])) return { message: one['error'] };
  return one;
}

/** The kind AWS names in x-amzn-ErrorType ("ValidationException:http://…" → "ValidationException"). */
function awsErrorType(headers: IncomingHttpHeaders | undefined): string | undefined {
  const v = headers?.['x-amzn-errortype'];
  const kind = (Array.isArray(v) ? v[0] : v)?.split(':')[0]?.trim();
  return kind === '' ? undefined : kind;
}

/**
 * The provider's error in OpenAI's terms: its message, its type (or one for the status) and its code (the
 * provider's own: OpenAI's code, Google's status, AWS's error kind). Undefined when the body holds no message.
 */
export function providerError(status: number, body: unknown, headers?: IncomingHttpHeaders): SseError | undefined {
  const e = errorObject(body);
  const message = e === undefined ? undefined : (text(e['message']) ?? text(e['Message']));
  if (e === undefined || message === undefined) return undefined;
  const code = text(e['code']) ?? text(e['status']) ?? awsErrorType(headers) ?? text(e['__type']);
  return { message, type: text(e['type']) ?? typeForStatus(status), code: code ?? (status === 429 ? 'rate_limit_exceeded' : null) };
}

/** JSON text, or undefined for anything else (an HTML page, a cut body). */
export function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
