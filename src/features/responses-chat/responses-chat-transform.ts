// The Responses API (POST /v1/responses) on a backend that speaks chat completions only (`api: chatCompletions`)
// or Anthropic's Messages API (`api: anthropic`), as a feature on the one call path. The body is made per backend,
// so a route may mix the kinds and fail over between them: a chatCompletions backend gets the request translated
// (responses-to-chat.ts) at /chat/completions, and its answer translated back (translated-response.ts); an anthropic
// backend gets that chat request translated on to the Messages API by chat-claude (chatToClaude, laid out for its
// cloud by claude-body.ts), and its answer back the same two steps (claude-response.ts); any other backend gets the
// client's body unchanged.
// Nothing is stored upstream, so the Response id the gateway mints is not a sealed id, and no backend is asked
// about it. Unless the client said `store: false`, the gateway keeps the response (its input items and the Response,
// kept-responses.ts), so that a later request's previous_response_id naming it has the conversation put before its
// input (kept-conversation.ts), an item_reference to one of its items is replaced by the item (item-references.ts),
// and a retrieve, delete or input_items list of it is answered by sealed-ids' follow-up routes from what was kept
// (keptFollowUps).
// Wired first, so that sealed ids, usage, limits and tracing see a Responses answer.
import { randomBytes } from 'node:crypto';
import type { Routed } from '../../dataplane/exchange/exchange.js';
import type { Answer, AnswerHandler, CallKind, ExchangeTransform, Feature, OutgoingBody, RequestPlan } from '../../dataplane/exchange/transform.js';
import { GatewayError } from '../../model/errors.js';
import { isRecord } from '../../model/translation.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import type { ChatRequest } from '../../model/chat-request.js';
import { claudeBody } from '../chat-claude/claude-body.js';
import { cloudOf, speaksClaude } from '../messages/backends/claude-cloud.js';
import { type ClaudeRequest, chatToClaude } from '../chat-claude/chat-to-claude.js';
import { claudeErrorAnswer } from '../chat-claude/claude-error.js';
import { isAwsEventStream } from '../messages/cloud-answer.js';
import { claudeResponse, type ClaudeResponseContext, claudeResponseStream, labelledClaudeResponse } from './claude-response.js';
import { referencedIds, resolveReferences, responsesOf } from './item-references.js';
import { isMintedResponseId } from './response-parts.js';
import { conversationUpTo, inputItemsOf } from './kept-conversation.js';
import type { KeptResponses } from './kept-responses.js';
import type { ResponseContext } from './response-context.js';
import { responsesToChat } from './responses-to-chat.js';
import { labelledResponse, translatedResponse, translatedResponseStream } from './translated-response.js';

const CHAT_PATH = '/chat/completions';
const JSON_TYPE = 'application/json';

/**
 * The Responses family's translation for chat completions backends; it parses the whole body itself. `kept`: where
 * the responses are kept for later requests (one per gateway).
 */
export function responsesChatFeature(kept: KeptResponses): Feature {
  // Only a route with a translated backend gets one: a Responses route on OpenAI's API pays nothing for it.
  return {
    reads: [],
    families: { responses: (x, kind) => (x.route.backends.some(isTranslated) ? new ResponsesChatExchange(x, kind, kept) : undefined) },
  };
}

function speaksChat(backend: CompiledBackend): boolean {
  return backend.api === 'chatCompletions';
}

/** A backend the Responses request is translated for: chat completions, or the Messages API through chat. */
function isTranslated(backend: CompiledBackend): boolean {
  return speaksChat(backend) || speaksClaude(backend);
}

class ResponsesChatExchange implements ExchangeTransform {
  readonly #x: Routed;
  readonly #kind: CallKind;
  readonly #kept: KeptResponses;
  #chat: ChatRequest | undefined;
  #ctx: ResponseContext | undefined;
  /** The translated body per upstream model name. */
  #bodies: Map<string, OutgoingBody> | undefined;
  /** The chat request translated on to the Messages API, for the anthropic backends. */
  #claude: { request: ClaudeRequest; ctx: ClaudeResponseContext; headers: RequestPlan['headers']; bodies: Map<string, OutgoingBody> } | undefined;

  constructor(x: Routed, kind: CallKind, kept: KeptResponses) {
    this.#x = x;
    this.#kind = kind;
    this.#kept = kept;
  }

  prepare(plan: RequestPlan): void | Promise<void> {
    if (!plan.backends.some(isTranslated)) return;
    const others = plan.backends.filter((b) => !isTranslated(b));
    if (!this.#kind.create) {
      // compact, input_tokens and the follow-ups need the Responses API itself: only the other backends serve them.
      if (others.length === 0) throw notServed(plan);
      plan.backends = others;
      return;
    }
    const body: unknown = JSON.parse(plan.json!.toString('utf8'));
    if (!isRecord(body)) return this.#translate(plan, body, others, undefined);
    // Only an id of the shape the translation mints can name a kept response; a sealed one is sealed-ids' to read.
    const prev = body['previous_response_id'];
    const previous = typeof prev === 'string' && isMintedResponseId(prev) ? prev : undefined;
    const ids = referencedIds(body);
    if (previous === undefined && ids.length === 0) return this.#translate(plan, body, others, undefined);
    return this.#fromKept(plan, body, previous, ids, others);
  }

  /**
   * The request with what the gateway kept put in: the items its references name, and the conversation its
   * previous_response_id continues (then only the translated backends can serve it). Kept under the token that was
   * answered: another key's references and responses find nothing.
   */
  async #fromKept(plan: RequestPlan, body: Record<string, unknown>, previous: string | undefined, ids: readonly string[], others: readonly CompiledBackend[]) {
    const scope = this.#x.token.ref;
    // References to items the translation never minted (a Responses backend's) are not looked up.
    const responses = responsesOf(ids);
    if (responses.length > 0) resolveReferences(body, await this.#kept.find(scope, responses));
    if (previous === undefined) return this.#translate(plan, body, others, undefined);
    const history = await conversationUpTo(this.#kept, scope, previous);
    if (!history) {
      // Not a response the gateway kept: one the route's Responses backends stored (sealed-ids reads it), or none.
      if (others.length === 0) throw previousNotFound();
      plan.backends = others;
      return;
    }
    plan.backends = plan.backends.filter(isTranslated);
    const own = inputItemsOf(body['input']);
    this.#translate(plan, { ...body, input: [...history, ...own], previous_response_id: null }, [], { previous, input: own });
  }

  /**
   * The request translated to chat (and on to the Messages API for anthropic backends), or the backends narrowed.
   * `continued`: the response it continues, and its own input (what its record keeps).
   */
  #translate(plan: RequestPlan, body: unknown, others: readonly CompiledBackend[], continued: { previous: string; input: unknown[] } | undefined): void {
    const translated = responsesToChat(body);
    if (!translated.ok) {
      // What chat cannot carry may still go to the route's Responses backends, which take it as it is.
      if (others.length === 0) throw translated.error;
      plan.backends = others;
      return;
    }
    const { chat, customTools, namespaced, echo } = translated.value;
    this.#chat = chat;
    const id = `resp_${randomBytes(16).toString('hex')}`;
    const scope = this.#x.token.ref;
    const input = continued?.input ?? inputItemsOf(isRecord(body) ? body['input'] : undefined);
    const previous = continued?.previous;
    this.#ctx = {
      id,
      createdAt: Math.floor(Date.now() / 1000),
      model: plan.member('model') ?? this.#x.route.model,
      customTools,
      namespaced,
      echo: previous === undefined ? echo : { ...echo, previous_response_id: previous },
      ...(echo['store'] === false ? {} : { keep: (response) => this.#kept.keep(scope, { id, previous, input, response }) }),
    };
    if (plan.backends.some(speaksClaude)) this.#toClaude(plan);
  }

  /** The chat request on to the Messages API; what Anthropic cannot carry leaves the anthropic backends out. */
  #toClaude(plan: RequestPlan): void {
    const claude = chatToClaude(this.#chat, this.#x.route.defaultMaxOutputTokens);
    if (claude.ok) {
      const chat = { id: `chatcmpl-${randomBytes(12).toString('hex')}`, created: this.#ctx!.createdAt, model: this.#ctx!.model, includeUsage: true };
      this.#claude = { request: claude.value.request, ctx: { chat, response: this.#ctx! }, headers: plan.headers, bodies: new Map() };
    }
    // A cloud adapter that refuses the request (it never does for a create) leaves its backend out too.
    const served = plan.backends.filter((b) => !speaksClaude(b) || this.body(b) !== undefined);
    if (served.length === 0) {
      throw claude.ok ? new GatewayError(400, "The request cannot be laid out for this model's backends.", { code: 'invalid_request' }) : claude.error;
    }
    plan.backends = served;
  }

  body(backend: CompiledBackend): OutgoingBody | undefined {
    if (speaksClaude(backend)) return this.#claudeBody(backend);
    const chat = this.#chat;
    if (!chat || !speaksChat(backend)) return undefined;
    let out = (this.#bodies ??= new Map()).get(backend.model);
    if (!out) {
      out = { body: Buffer.from(JSON.stringify({ ...chat, model: backend.model })), contentType: JSON_TYPE, path: CHAT_PATH };
      this.#bodies.set(backend.model, out);
    }
    return out;
  }

  #claudeBody(backend: CompiledBackend): OutgoingBody | undefined {
    const claude = this.#claude;
    if (!claude) return undefined;
    let out = claude.bodies.get(backend.id);
    if (!out) {
      out = claudeBody(backend, claude.request, claude.headers);
      if (out) claude.bodies.set(backend.id, out);
    }
    return out;
  }

  onResponseStart(a: Answer): AnswerHandler | undefined {
    if (speaksClaude(a.backend)) return this.#claudeAnswer(a);
    const ctx = this.#ctx;
    if (!ctx || !speaksChat(a.backend) || a.statusCode >= 300) return undefined;
    if (a.isStream) return translatedResponseStream(ctx, a.progress);
    // A stream request answered whole (a server that ignored `stream`) is a Response too, which whole-stream, wired
    // later, tells as the stream's events (as for a Responses backend that answered whole); a stream its server
    // labelled JSON is translated as a stream, which whole-stream passes on.
    a.headers['content-type'] = JSON_TYPE;
    return this.#chat?.stream ? labelledResponse(ctx, a.progress) : translatedResponse(ctx);
  }

  /** As chat-claude answers: Anthropic's errors retold in OpenAI's shape, a stream or a whole answer translated. */
  #claudeAnswer(a: Answer): AnswerHandler | undefined {
    const claude = this.#claude;
    if (!claude) return undefined;
    if (a.statusCode >= 300) return claudeErrorAnswer(a.headers);
    if (a.isStream) return claudeResponseStream(claude.ctx, a.progress, cloudOf(a.backend) === 'bedrock' && isAwsEventStream(a.headers));
    a.headers['content-type'] = JSON_TYPE;
    return claude.request.stream ? labelledClaudeResponse(claude.ctx, a.progress) : claudeResponse(claude.ctx);
  }
}

/** A call beside the create on a route whose backends all speak chat completions or the Messages API. */
function notServed(plan: RequestPlan): GatewayError {
  // A follow-up names a stored response, which a translated backend never had (its id was minted by the gateway).
  if (plan.json === undefined) return new GatewayError(404, 'No response found with that id.', { code: 'not_found' });
  return new GatewayError(
    400,
    "This model's backend speaks chat completions or the Messages API, which have no such call; only POST /v1/responses is served for it.",
    {
      code: 'unsupported_endpoint',
    },
  );
}

/** A previous_response_id the gateway did not keep (as sealed ids answer an id they refuse: never saying which). */
function previousNotFound(): GatewayError {
  return new GatewayError(
    404,
    "No response found with that id. This model's backend stores nothing: the gateway keeps its responses for an hour, for the key that got them, unless the request said store: false.",
    { code: 'not_found', param: 'previous_response_id' },
  );
}
