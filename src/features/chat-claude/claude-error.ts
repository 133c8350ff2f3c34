// An anthropic backend's error answer to a translated chat request, retold in OpenAI's error shape with its status
// kept (and its retry-after: the OpenAI SDKs retry a 429 and any 5xx, Anthropic's 529 overloaded too). Anthropic's
// `{"type":"error","error":{"type","message"}}` becomes `{"error":{"message","type","param","code"}}`, its type
// kept as the code; any other body (a cloud's own shape) is passed on for the data plane's retelling.
import type { AnswerHandler } from '../../dataplane/exchange/transform.js';
import { jsonOr } from '../../dataplane/exchange/whole-body.js';

/** An error object is small; a body larger than this is passed on as it came. */
const MAX_ERROR_BYTES = 64 * 1024;
const EMPTY = Buffer.alloc(0);

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

/** Anthropic's error body in OpenAI's shape; undefined when the body is not Anthropic's. */
function openAiErrorOf(body: unknown): string | undefined {
  const e = (body as { type?: unknown; error?: { type?: unknown; message?: unknown } } | undefined) ?? undefined;
  if (e?.type !== 'error' || typeof e.error?.type !== 'string' || typeof e.error.message !== 'string') return undefined;
  const code = e.error.type === 'rate_limit_error' ? 'rate_limit_exceeded' : e.error.type;
  return JSON.stringify({ error: { message: e.error.message, type: OPENAI_TYPES[e.error.type] ?? 'server_error', param: null, code } });
}

export class ClaudeErrorAnswer implements AnswerHandler {
  readonly edits = true;
  readonly holdsBody = true;
  readonly #headers: Record<string, string | string[] | undefined>;
  #chunks: Buffer[] = [];
  #bytes = 0;
  #passing = false;

  constructor(headers: Record<string, string | string[] | undefined>) {
    this.#headers = headers;
  }

  onData(chunk: Buffer): Buffer {
    if (this.#passing) return chunk;
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    if (this.#bytes <= MAX_ERROR_BYTES) return EMPTY;
    this.#passing = true;
    const held = Buffer.concat(this.#chunks);
    this.#chunks = [];
    return held;
  }

  flush(): Buffer | undefined {
    if (this.#passing) return undefined;
    const held = Buffer.concat(this.#chunks);
    const told = openAiErrorOf(jsonOr(held.toString('utf8'), undefined));
    if (told === undefined) return held;
    this.#headers['content-type'] = 'application/json';
    return Buffer.from(told);
  }
}
