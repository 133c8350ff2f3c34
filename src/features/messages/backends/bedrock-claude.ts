// Claude on Amazon Bedrock through InvokeModel: the base URL is the runtime's root
// (https://bedrock-runtime.{region}.amazonaws.com); a message is POST /model/{modelId}/invoke, or
// /invoke-with-response-stream for a stream, whose answer is AWS event-stream framing (bedrock-sse.ts decodes it).
// The body is the Messages body without `model` and `stream`, with `anthropic_version` and the betas in
// `anthropic_beta` (Bedrock reads no anthropic-* header), only those the backend allows (by default none: Bedrock
// refuses a flag it does not support for the model). InvokeModel has no token counting. Pure.
import { anthropicError } from '../../../model/anthropic-errors.js';
import type { Translated } from '../../../model/anthropic-errors.js';
import { allowedBetas, headerBetas } from './anthropic-betas.js';
import { type ClaudeCall, type CloudRequest, notAnObject } from './cloud-request.js';
import { TopLevelMembers } from './top-level-members.js';

/** The body's `anthropic_version` that Bedrock requires. */
const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** The answer's content type of InvokeModelWithResponseStream. */
export const AWS_EVENT_STREAM = 'application/vnd.amazon.eventstream';

const MOVED = ['model', 'stream', 'anthropic_version', 'anthropic_beta'];

export function bedrockClaudeRequest(call: ClaudeCall): Translated<CloudRequest> {
  if (call.operation === 'count_tokens')
    return { ok: false, status: 404, error: anthropicError('not_found_error', 'Token counting is not available for this model on Amazon Bedrock.') };
  const members = TopLevelMembers.read(call.body, MOVED);
  if (!members) return notAnObject;
  const betas = allowedBetas([...headerBetas(call.headers['anthropic-beta']), ...bodyBetas(members.text('anthropic_beta'))], call.betas);
  const append: Record<string, string> = { anthropic_version: JSON.stringify(BEDROCK_ANTHROPIC_VERSION) };
  if (betas.length > 0) append['anthropic_beta'] = JSON.stringify(betas);
  const path = `/model/${awsLabel(call.model)}/${call.stream ? 'invoke-with-response-stream' : 'invoke'}`;
  // InvokeModel takes the body's type in Accept; the streaming call takes it in X-Amzn-Bedrock-Accept.
  const setHeaders: Record<string, string> = call.stream
    ? { accept: AWS_EVENT_STREAM, 'x-amzn-bedrock-accept': 'application/json' }
    : { accept: 'application/json' };
  return {
    ok: true,
    value: {
      path,
      body: members.edit(MOVED, append),
      contentType: 'application/json',
      dropHeaders: ['anthropic-version', 'anthropic-beta'],
      setHeaders,
      answer: call.stream ? 'aws-event-stream' : 'anthropic',
    },
  };
}

/**
 * A path label as the AWS SDK encodes it (encodeURIComponent and !'()*): a model id's ":" and an inference
 * profile ARN's "/" are percent-encoded once; the SigV4 signer encodes the path once more, as Bedrock expects.
 */
function awsLabel(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** A body's own `anthropic_beta` (a client that knew it spoke to Bedrock): kept when it is a list of strings. */
function bodyBetas(text: string | undefined): string[] {
  if (text === undefined) return [];
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? value.filter((b): b is string => typeof b === 'string') : [];
}
