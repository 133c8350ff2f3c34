// Names from the OpenTelemetry semantic conventions (HTTP, GenAI) and the gateway's own attributes, in one place.
// The GenAI conventions are in development; these follow the names the OpenTelemetry JS semantic-conventions
// package lists (gen_ai.operation.name, gen_ai.request.model, gen_ai.response.model, gen_ai.usage.*).
import type { Family } from '../../model/families.js';
import { attributeKey } from './attribute-keys.js';

/** gen_ai.operation.name per API family: the convention's well-known values where one fits. */
export const OPERATION: Readonly<Record<Family, string>> = {
  'chat.completions': 'chat',
  responses: 'chat',
  embeddings: 'embeddings',
  'images.generations': 'generate_content',
  'images.edits': 'generate_content',
  'audio.transcriptions': 'generate_content',
  'audio.translations': 'generate_content',
  'audio.speech': 'generate_content',
  videos: 'generate_content',
  messages: 'chat',
};

/**
 * The attribute keys the gateway sets, made first so that each has a bit of its own (attribute-keys.ts). Content keys
 * are never cached.
 */
export const A = {
  // HTTP
  method: attributeKey('http.request.method'),
  status: attributeKey('http.response.status_code'),
  route: attributeKey('http.route'),
  urlPath: attributeKey('url.path'),
  urlScheme: attributeKey('url.scheme'),
  urlFull: attributeKey('url.full'),
  serverAddress: attributeKey('server.address'),
  serverPort: attributeKey('server.port'),
  errorType: attributeKey('error.type'),
  // GenAI
  operation: attributeKey('gen_ai.operation.name'),
  provider: attributeKey('gen_ai.provider.name'),
  requestModel: attributeKey('gen_ai.request.model'),
  responseModel: attributeKey('gen_ai.response.model'),
  inputTokens: attributeKey('gen_ai.usage.input_tokens'),
  outputTokens: attributeKey('gen_ai.usage.output_tokens'),
  timeToFirstChunk: attributeKey('gen_ai.response.time_to_first_chunk'),
  inputMessages: attributeKey('gen_ai.input.messages', false),
  outputMessages: attributeKey('gen_ai.output.messages', false),
  systemInstructions: attributeKey('gen_ai.system_instructions', false),
  // The gateway's own
  requestId: attributeKey('model_gateway.request_id'),
  group: attributeKey('model_gateway.group'),
  tokenNamespace: attributeKey('model_gateway.token.namespace'),
  tokenName: attributeKey('model_gateway.token.name'),
  publicModel: attributeKey('model_gateway.model'),
  backend: attributeKey('model_gateway.backend'),
  backendId: attributeKey('model_gateway.backend.id'),
  attempt: attributeKey('model_gateway.attempt'),
  attempts: attributeKey('model_gateway.attempts'),
  outcome: attributeKey('model_gateway.attempt.outcome'),
  failoverReason: attributeKey('model_gateway.failover.reason'),
  aborted: attributeKey('model_gateway.client_aborted'),
  usageEstimated: attributeKey('model_gateway.usage.estimated'),
} as const;
