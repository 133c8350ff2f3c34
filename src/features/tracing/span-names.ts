// Names from the OpenTelemetry semantic conventions (HTTP, GenAI) and the gateway's own attributes, in one place.
// The GenAI conventions are in development; these follow the names the OpenTelemetry JS semantic-conventions
// package lists (gen_ai.operation.name, gen_ai.request.model, gen_ai.response.model, gen_ai.usage.*).
import type { Family } from '../../model/families.js';

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
 * The methods HTTP defines (RFC 9110, and PATCH): the only values http.request.method takes. Any other (node's parser
 * takes WebDAV's, SEARCH, …) is `_OTHER`, its name kept in http.request.method_original, and the span named `HTTP`.
 */
export const KNOWN_METHODS: ReadonlySet<string> = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);

/** The attribute keys the gateway sets. */
export const A = {
  // HTTP
  method: 'http.request.method',
  methodOriginal: 'http.request.method_original',
  status: 'http.response.status_code',
  route: 'http.route',
  urlPath: 'url.path',
  urlScheme: 'url.scheme',
  urlFull: 'url.full',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  errorType: 'error.type',
  // GenAI
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  timeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  systemInstructions: 'gen_ai.system_instructions',
  // The gateway's own
  requestId: 'model_gateway.request_id',
  group: 'model_gateway.group',
  tokenNamespace: 'model_gateway.token.namespace',
  tokenName: 'model_gateway.token.name',
  publicModel: 'model_gateway.model',
  backend: 'model_gateway.backend',
  backendId: 'model_gateway.backend.id',
  attempt: 'model_gateway.attempt',
  attempts: 'model_gateway.attempts',
  outcome: 'model_gateway.attempt.outcome',
  failoverReason: 'model_gateway.failover.reason',
  aborted: 'model_gateway.client_aborted',
  usageEstimated: 'model_gateway.usage.estimated',
  cost: 'model_gateway.cost',
  costCurrency: 'model_gateway.cost.currency',
} as const;
