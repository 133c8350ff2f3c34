// What the Claude adapters of the clouds take and give: a Messages API call as the client made it, and the request
// that the cloud's own endpoint for Claude takes instead (path below the backend's base URL, body, header edits).
// The credential is not theirs: the data plane's identity (a Google token, a SigV4 signature) is added after.
import type { IncomingHttpHeaders } from 'node:http';
import { anthropicError } from '../../../model/anthropic-errors.js';
import type { Translated } from '../../../model/anthropic-errors.js';

/** The Messages API operations a cloud adapter lays out: POST /v1/messages and POST /v1/messages/count_tokens. */
type MessagesOperation = 'messages' | 'count_tokens';

export interface ClaudeCall {
  readonly operation: MessagesOperation;
  /** The client's JSON body, as received (its `model` may be the public name: the adapter sets the upstream's). */
  readonly body: Buffer;
  /** The model the cloud is asked for: the backend's upstream model (CompiledBackend.model). */
  readonly model: string;
  /** The client asked for an event stream (`"stream": true`). */
  readonly stream: boolean;
  /** The client's request headers (lower-case names, as node gives them). */
  readonly headers: IncomingHttpHeaders;
  /** The anthropic-beta flags the backend receives (anthropic-betas.ts: betaAllowList); undefined: all the client sent. */
  readonly betas: ReadonlySet<string> | undefined;
}

/** How the cloud's answer reaches the client. */
type AnswerFraming =
  /** Anthropic's own JSON or SSE already: relayed as it comes. */
  | 'anthropic'
  /** AWS event-stream frames wrapping Anthropic's events: decoded into SSE (BedrockSseDecoder), sent as text/event-stream. */
  | 'aws-event-stream';

export interface CloudRequest {
  /** Below the backend's base URL, starting with "/", percent-encoded as it goes on the wire. */
  readonly path: string;
  readonly body: Buffer;
  readonly contentType: 'application/json';
  /** Client headers not to forward (lower case). */
  readonly dropHeaders: readonly string[];
  /** Headers to send (lower case), replacing any client header of the same name. */
  readonly setHeaders: Readonly<Record<string, string>>;
  readonly answer: AnswerFraming;
}

/** The client's body was not a JSON object: refused as Anthropic refuses it. */
export const notAnObject: Translated<never> = {
  ok: false,
  status: 400,
  error: anthropicError('invalid_request_error', 'The request body must be a JSON object.'),
};

/**
 * A path segment as RFC 3986 allows it unencoded (unreserved, sub-delims, ":" and "@"), everything else
 * percent-encoded: a Vertex model id such as claude-sonnet-4-5@20250929 goes as Google's documentation writes it.
 */
export function pathSegment(s: string): string {
  return s.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@]+/g, encodeURIComponent);
}
