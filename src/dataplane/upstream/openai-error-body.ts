// An upstream's error answer to an OpenAI client, told in OpenAI's shape when the provider's own shape hides its
// message from the OpenAI SDKs (Bedrock's {"message"}: "403 status code (no body)" in older SDKs, a JSON dump in
// others). The status is kept; a body that already is OpenAI's, or holds no message, goes out as it came.
import type { Request } from 'express';
import type { Answer, AnswerHandler } from '../exchange/transform.js';
import { clientApiOf } from '../request/client-api.js';
import type { BodyCoding } from './content-decoding.js';
import { isOpenAiError, parseJson, providerError } from './provider-error.js';

/** An error object is small; a body larger than this is no error object and is passed on as it came. */
const MAX_ERROR_BYTES = 64 * 1024;
const EMPTY = Buffer.alloc(0);

/** The handler for this answer, when it is an error answer an OpenAI client gets whole (not a stream). */
export function openAiErrorRetelling(answer: Answer, req: Request, coding: BodyCoding): AnswerHandler | undefined {
  if (answer.statusCode < 400 || answer.isStream || req.method === 'HEAD' || coding.kind === 'unsupported') return undefined;
  if (clientApiOf(req.path, answer.exchange.family, req.headers['anthropic-version']) !== 'openai') return undefined;
  const { statusCode, headers } = answer;
  return new OpenAiErrorBody(headers, (body) => {
    if (isOpenAiError(body)) return undefined;
    const e = providerError(statusCode, body, headers);
    return e && { message: e.message, type: e.type, code: e.code };
  });
}

/** An error in OpenAI's shape, or undefined to pass the body on as it came. */
export type ToOpenAiError = (body: unknown) => { message: string; type: string; code: string | null } | undefined;

/**
 * Holds an error answer's body (up to MAX_ERROR_BYTES) and tells it in OpenAI's shape by `tell`: the one holder for
 * every provider's shape (this data plane's, and a translation's such as chat-claude's for Anthropic's).
 */
export class OpenAiErrorBody implements AnswerHandler {
  readonly edits = true;
  readonly holdsBody = true;
  readonly #headers: Answer['headers'];
  readonly #tell: ToOpenAiError;
  #chunks: Buffer[] = [];
  #bytes = 0;
  #passing = false;

  constructor(headers: Answer['headers'], tell: ToOpenAiError) {
    this.#headers = headers;
    this.#tell = tell;
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
    const body = parseJson(held.toString('utf8'));
    const e = body === undefined ? undefined : this.#tell(body);
    if (e === undefined) return held;
    // The head waits for this body (holdsBody): it goes out with the new body's type and length (the credential
    // mask after this keeps lengths; a Content-Length is dropped anyway when another handler edits or it is decoded).
    const told = Buffer.from(JSON.stringify({ error: { message: e.message, type: e.type, param: null, code: e.code } }));
    this.#headers['content-type'] = 'application/json';
    this.#headers['content-length'] = String(told.length);
    return told;
  }
}
