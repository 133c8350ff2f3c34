// The Messages API (POST /v1/messages) as a feature on the one call path. A route may mix backends of both kinds,
// and the body is made per backend, so failover between them works: a backend with `api: anthropic` gets the
// client's body with only `model` renamed (thinking blocks and signatures, cache_control, tools, metadata pass as
// sent; anthropic-version and anthropic-beta are forwarded with the other client headers) and its answer is relayed
// byte for byte, read only for its usage; an OpenAI-compatible backend gets the request translated to chat
// completions (messages-to-chat.ts) at /chat/completions, and its answer translated back (translated-answer.ts).
// A native backend that is a cloud's own endpoint for Claude (Vertex AI, Bedrock's InvokeModel: backends/) gets the
// request laid out for it (cloud-answer.ts), and its error answers in Anthropic's shape. Each native backend gets
// only the anthropic-beta flags it allows (backends/anthropic-betas.ts: by default all, but none to Bedrock).
// Errors that end a stream are Anthropic's `event: error`.
import type { Routed } from '../../dataplane/exchange/exchange.js';
import type { Answer, AnswerHandler, CallKind, ExchangeTransform, Feature, OutgoingBody, RequestPlan, SseError } from '../../dataplane/exchange/transform.js';
import { type AnthropicErrorType, anthropicError } from '../../model/anthropic-errors.js';
import { GatewayError } from '../../model/errors.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import { sseEvent } from './answer-parts.js';
import { betaAllowList, betaHeaderEdits } from './backends/anthropic-betas.js';
import { cloudOf, speaksClaude } from './backends/claude-cloud.js';
import type { AnswerContext } from './chat-to-messages.js';
import type { ChatRequest } from '../../model/chat-request.js';
import type { IncomingHttpHeaders } from 'node:http';
import { bedrockStreamReader, cloudBody, isAwsEventStream } from './cloud-answer.js';
import { messagesToChat } from './messages-to-chat.js';
import { NativeAnswerEvents, NativeAnswerReader, NativeStreamReader } from './native-answer.js';
import { labelledTranslation, TranslatedAnswer, TranslatedError, translatedStream } from './translated-answer.js';

const CHAT_PATH = '/chat/completions';
const JSON_TYPE = 'application/json';
const SSE_TYPE = 'text/event-stream';

/** The Messages family's transform; reads `max_tokens` (required by the API, and what limits reserve). */
export function messagesFeature(): Feature {
  return { reads: ['max_tokens'], families: { messages: (x, kind) => new MessagesExchange(x, kind) } };
}

function isCloud(backend: CompiledBackend): boolean {
  return cloudOf(backend) !== undefined;
}

/** True for a backend that counts tokens with the model's own tokenizer: a native one, but Bedrock's InvokeModel has no count. */
export function countsTokens(backend: CompiledBackend): boolean {
  return speaksClaude(backend) && cloudOf(backend) !== 'bedrock';
}

class MessagesExchange implements ExchangeTransform {
  readonly #x: Routed;
  /** The create call (POST /v1/messages); else count_tokens, which only native backends are asked. */
  readonly #create: boolean;
  /** The request as chat completions, when a backend of the plan needs it (its model set per backend). */
  #chat: ChatRequest | undefined;
  #ctx: AnswerContext | undefined;
  /** The client asked for an event stream. */
  #stream = false;
  /** The client's headers, whose anthropic-beta a native backend's allow list narrows. */
  #headers: IncomingHttpHeaders = {};
  #bodies: Map<string, OutgoingBody> | undefined;
  /** The request laid out for each cloud backend of the plan (by backend id). */
  #clouds: Map<string, OutgoingBody> | undefined;

  constructor(x: Routed, kind: CallKind) {
    this.#x = x;
    this.#create = kind.create;
  }

  prepare(plan: RequestPlan): void {
    this.#stream = plan.stream;
    this.#headers = plan.headers;
    if (this.#create) {
      // Anthropic requires max_tokens, and limits reserve it: a request without it is refused before any upstream.
      const max = plan.integer('max_tokens');
      if (max === undefined || max < 1) throw missingMaxTokens();
    }
    this.#layOutClouds(plan);
    if (!this.#create || plan.backends.every(speaksClaude)) return;
    const body: unknown = JSON.parse(plan.json!.toString('utf8'));
    const chat = messagesToChat(body, this.#x.route.model);
    if (!chat.ok) {
      // What chat cannot carry may still go to the route's native backends, which take it as it is.
      const native = plan.backends.filter(speaksClaude);
      if (native.length === 0) throw new GatewayError(chat.status, chat.error.error.message, { code: 'invalid_request' });
      plan.backends = native;
      return;
    }
    this.#chat = chat.value;
    const stop = (body as { stop_sequences?: unknown }).stop_sequences;
    this.#ctx = {
      model: plan.member('model') ?? this.#x.route.model,
      stopSequences: Array.isArray(stop) ? stop.filter((s): s is string => typeof s === 'string') : undefined,
    };
  }

  /** Lays the request out for each cloud backend; a backend whose adapter refuses it is not tried. */
  #layOutClouds(plan: RequestPlan): void {
    if (!plan.backends.some(isCloud)) return;
    let refusal: GatewayError | undefined;
    const kept = plan.backends.filter((backend) => {
      const cloud = cloudOf(backend);
      if (cloud === undefined) return true;
      const betas = betaAllowList(backend, cloud === 'bedrock');
      const call = { create: this.#create, body: plan.json!, model: backend.model, stream: plan.stream, headers: plan.headers, betas };
      const out = cloudBody(cloud, call);
      if (out.ok) (this.#clouds ??= new Map()).set(backend.id, out.value);
      else refusal ??= new GatewayError(out.status, out.error.error.message, { code: 'invalid_request' });
      return out.ok;
    });
    if (kept.length === 0 && refusal) throw refusal;
    plan.backends = kept;
  }

  body(backend: CompiledBackend): OutgoingBody | undefined {
    const cloud = this.#clouds?.get(backend.id);
    if (cloud) return cloud;
    const chat = this.#chat;
    if (speaksClaude(backend) || !chat) return undefined;
    let out = (this.#bodies ??= new Map()).get(backend.model);
    if (!out) {
      out = { body: Buffer.from(JSON.stringify({ ...chat, model: backend.model })), contentType: JSON_TYPE, path: CHAT_PATH };
      this.#bodies.set(backend.model, out);
    }
    return out;
  }

  /** A native backend that takes the client's body as it is (Anthropic's API) with an allow list: its betas narrowed. */
  headers(backend: CompiledBackend): OutgoingBody['headers'] {
    if (!speaksClaude(backend) || isCloud(backend)) return undefined;
    return betaHeaderEdits(this.#headers['anthropic-beta'], betaAllowList(backend, false));
  }

  onResponseStart(a: Answer): AnswerHandler | undefined {
    // Anthropic's SDKs take an answer's request id (`_request_id`, an error's requestID) from request-id: a backend
    // that names none (a chat backend, a cloud) gets the gateway's, as the gateway's own errors carry it.
    a.headers['request-id'] ??= a.exchange.id;
    if (speaksClaude(a.backend)) {
      const cloud = this.#clouds?.has(a.backend.id) ?? false;
      // A cloud's errors are its own shape (Bedrock's {"message"}, Google's {"error":{"message"}}): told as Anthropic's.
      if (cloud && a.statusCode >= 300) return translatedError(a);
      if (a.statusCode >= 300 || !this.#create) return undefined;
      if (a.isStream) return cloud && isAwsEventStream(a.headers) ? bedrockStreamReader() : new NativeStreamReader();
      if (!a.contentType.includes('json')) return undefined;
      if (!this.#stream) return new NativeAnswerReader();
      // A stream request answered whole (a cache, a proxy that ignored `stream`): sent as the stream's events.
      a.headers['content-type'] = SSE_TYPE;
      return new NativeAnswerEvents();
    }
    if (a.statusCode >= 300) return translatedError(a);
    const ctx = this.#ctx!;
    if (a.isStream) return translatedStream(ctx);
    a.headers['content-type'] = this.#stream ? SSE_TYPE : JSON_TYPE;
    if (!this.#stream) return new TranslatedAnswer(ctx);
    // A stream request answered with another label: a stream labelled JSON is translated as a stream, a backend that
    // ignored `stream` and answered whole is sent as events all the same (all a stream's client parses).
    return labelledTranslation(ctx);
  }

  errorEvent(e: SseError): string {
    return anthropicErrorEvent(e);
  }
}

/** An upstream's error answer retold in Anthropic's shape, which is JSON whatever the upstream's was (a proxy's HTML page). */
function translatedError(a: Answer): AnswerHandler {
  a.headers['content-type'] = JSON_TYPE;
  return new TranslatedError(a.statusCode);
}

function missingMaxTokens(): GatewayError {
  return new GatewayError(400, 'max_tokens: Field required (a positive integer).', { code: 'missing_required_parameter', param: 'max_tokens' });
}

const ANTHROPIC_TYPES: ReadonlySet<string> = new Set<AnthropicErrorType>([
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'overloaded_error',
]);

/** Anthropic's `event: error` for an error the gateway tells inside a stream (its own, or an upstream's retold). */
function anthropicErrorEvent(e: SseError): string {
  return sseEvent('error', anthropicError(errorType(e), e.message));
}

/** An upstream's Anthropic type is kept; the gateway's and OpenAI's kinds are mapped to the nearest one. */
function errorType(e: SseError): AnthropicErrorType {
  if (ANTHROPIC_TYPES.has(e.type)) return e.type as AnthropicErrorType;
  switch (e.code) {
    case 'rate_limit_exceeded':
      return 'rate_limit_error';
    case 'server_shutting_down':
    case 'server_overloaded':
      return 'overloaded_error';
  }
  if (e.type === 'requests' || e.type === 'tokens' || e.type === 'insufficient_quota') return 'rate_limit_error';
  return e.type === 'invalid_request_error' ? 'invalid_request_error' : 'api_error';
}
