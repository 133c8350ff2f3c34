// Bedrock's InvokeModelWithResponseStream answer as the SSE a Messages API client expects. Each event-stream message
// of type `chunk` carries {"bytes": "<base64 of one Anthropic event's JSON>"}, which becomes
// `event: <its type>\ndata: <its JSON>\n\n`; an exception message (throttling, validation, a model stream error…)
// becomes Anthropic's `event: error` with the error type of the exception's HTTP status. A synchronous chunk
// editor, shaped for the data plane's AnswerHandler (onData / flush).
import type { AnswerHandler } from '../../../dataplane/exchange/transform.js';
import { type AnthropicErrorType, anthropicError, errorTypeForStatus } from '../../../model/anthropic-errors.js';
import { type EventStreamMessage, EventStreamReader } from './aws-event-stream.js';

/** The HTTP status Bedrock documents for each exception of its response stream. */
const EXCEPTION_STATUS: Readonly<Record<string, number>> = {
  validationException: 400,
  modelTimeoutException: 408,
  modelStreamErrorException: 424,
  throttlingException: 429,
  internalServerException: 500,
  serviceUnavailableException: 503,
};

export class BedrockSseDecoder {
  readonly #reader = new EventStreamReader();

  /** The SSE bytes of the messages this chunk completes (empty while a message is incomplete). Throws EventStreamError. */
  push(chunk: Uint8Array): Buffer {
    const messages = this.#reader.push(chunk);
    return messages.length === 0 ? EMPTY : Buffer.from(messages.map(sseOf).join(''), 'utf8');
  }

  /** The stream ended: nothing is held back between messages, so only a cut-off message (an EventStreamError) is left to tell. */
  end(): Buffer {
    this.#reader.end();
    return EMPTY;
  }
}

const EMPTY = Buffer.alloc(0);

/** The answer handler of a Bedrock stream: the first handler, so those after it (usage, tracing) read Anthropic's SSE. */
export function bedrockSseHandler(): AnswerHandler {
  const decoder = new BedrockSseDecoder();
  return { edits: true, onData: (chunk) => decoder.push(chunk), flush: () => decoder.end() };
}

function sseOf(m: EventStreamMessage): string {
  const kind = headerText(m, ':message-type');
  if (kind === 'event') {
    const type = headerText(m, ':event-type');
    // Other event types would be new members of Bedrock's stream: nothing a Messages client knows.
    return type === 'chunk' ? chunkEvent(m.body) : '';
  }
  if (kind === 'exception') return exceptionEvent(headerText(m, ':exception-type') ?? 'unknownException', m.body);
  // `error` messages carry their code and text in headers (an unmodelled service error).
  const code = headerText(m, ':error-code') ?? 'UnknownError';
  return errorEvent('api_error', `${code}: ${headerText(m, ':error-message') ?? 'the stream failed'}`);
}

function chunkEvent(body: Uint8Array): string {
  const payload = parseJson(body) as { bytes?: unknown } | undefined;
  if (typeof payload?.bytes !== 'string') return errorEvent('api_error', 'Bedrock sent a chunk without bytes.');
  const json = Buffer.from(payload.bytes, 'base64').toString('utf8');
  const event = parseJson(json) as { type?: unknown } | undefined;
  if (typeof event?.type !== 'string') return errorEvent('api_error', 'Bedrock sent a chunk that is not an Anthropic event.');
  // One data line: JSON may hold line breaks only between tokens, and SSE would split the event there.
  const data = /[\r\n]/.test(json) ? JSON.stringify(event) : json;
  return `event: ${event.type}\ndata: ${data}\n\n`;
}

function exceptionEvent(name: string, body: Uint8Array): string {
  const detail = parseJson(body) as { message?: unknown; originalStatusCode?: unknown; originalMessage?: unknown } | undefined;
  // A model stream error tells the model's own status, which says more than Bedrock's 424.
  const status = typeof detail?.originalStatusCode === 'number' ? detail.originalStatusCode : EXCEPTION_STATUS[name];
  const message = [detail?.message, detail?.originalMessage].find((m): m is string => typeof m === 'string' && m !== '');
  return errorEvent(status === undefined ? 'api_error' : errorTypeForStatus(status), `${name}: ${message ?? 'Bedrock ended the stream with an exception.'}`);
}

function errorEvent(type: AnthropicErrorType, message: string): string {
  return `event: error\ndata: ${JSON.stringify(anthropicError(type, message))}\n\n`;
}

function headerText(m: EventStreamMessage, name: string): string | undefined {
  const h = m.headers[name];
  return h?.type === 'string' ? h.value : undefined;
}

function parseJson(input: Uint8Array | string): unknown {
  try {
    return JSON.parse(typeof input === 'string' ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString('utf8'));
  } catch {
    return undefined;
  }
}
