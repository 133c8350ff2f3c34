// A translated Messages request laid out for an anthropic backend: for a cloud (Bedrock, Vertex AI) by the messages
// feature's cloud adapters, for Anthropic's API at /messages with the API version and the betas the backend allows.
// Shared by the translations that end at the Messages API (chat completions, and Responses through chat).
import type { IncomingHttpHeaders } from 'node:http';
import type { OutgoingBody } from '../../dataplane/exchange/transform.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import { betaAllowList, betaHeaderEdits } from '../messages/backends/anthropic-betas.js';
import { cloudOf } from '../messages/backends/claude-cloud.js';
import { cloudBody } from '../messages/cloud-answer.js';
import type { ClaudeRequest } from './chat-to-claude.js';

const MESSAGES_PATH = '/messages';
const JSON_TYPE = 'application/json';
/** The Messages API version the translation speaks, as Anthropic's SDKs send it. */
const ANTHROPIC_VERSION = '2023-06-01';

/** The body for an anthropic backend; undefined when its cloud adapter refuses the request (it never does for a create). */
export function claudeBody(backend: CompiledBackend, request: ClaudeRequest, headers: IncomingHttpHeaders): OutgoingBody | undefined {
  const stream = request.stream === true;
  const json = Buffer.from(JSON.stringify({ model: backend.model, ...request }));
  const cloud = cloudOf(backend);
  if (cloud) {
    const call = { create: true, body: json, model: backend.model, stream, headers, betas: betaAllowList(backend, cloud === 'bedrock') };
    const laid = cloudBody(cloud, call);
    return laid.ok ? laid.value : undefined;
  }
  const betas = betaHeaderEdits(headers['anthropic-beta'], betaAllowList(backend, false));
  return {
    body: json,
    contentType: JSON_TYPE,
    path: MESSAGES_PATH,
    headers: { drop: betas?.drop ?? [], set: { ...betas?.set, 'anthropic-version': ANTHROPIC_VERSION } },
  };
}
