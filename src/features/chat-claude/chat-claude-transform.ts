// Chat completions (POST /v1/chat/completions) on a backend that speaks Anthropic's Messages API (`api: anthropic`:
// Anthropic's API, Claude on Vertex AI's rawPredict or Bedrock's InvokeModel), as a feature on the one call path.
// The body is made per backend, so a route may mix both kinds and fail over between them: an anthropic backend gets
// the request translated (chat-to-claude.ts) at /messages, laid out for its cloud when it is one (the messages
// feature's cloud adapters, claude-body.ts), and its answer translated back (claude-completion.ts, claude-stream.ts); any other backend gets the client's
// body unchanged. Wired after the Messages feature, before sealed ids, usage, limits and tracing, which then see a
// chat completion.
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Routed } from '../../dataplane/exchange/exchange.js';
import type { Answer, AnswerHandler, ExchangeTransform, Feature, OutgoingBody, RequestPlan } from '../../dataplane/exchange/transform.js';
import { GatewayError } from '../../model/errors.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import { isAwsEventStream } from '../messages/cloud-answer.js';
import { cloudOf, speaksClaude } from '../messages/backends/claude-cloud.js';
import { claudeBody } from './claude-body.js';
import { type ClaudeRequest, chatToClaude } from './chat-to-claude.js';
import { claudeCompletion } from './claude-completion.js';
import { claudeErrorAnswer } from './claude-error.js';
import { claudeStream, labelledClaudeAnswer } from './claude-stream.js';
import type { CompletionContext } from './completion-context.js';

const JSON_TYPE = 'application/json';

/** The chat completions family's translation for anthropic backends; it parses the whole body itself. */
export function chatClaudeFeature(): Feature {
  // Only a route with an anthropic backend gets one: the chat path of every other route pays nothing for it.
  return {
    reads: [],
    families: { 'chat.completions': (x, kind) => (kind.create && x.route.backends.some(speaksClaude) ? new ChatClaudeExchange(x) : undefined) },
  };
}

class ChatClaudeExchange implements ExchangeTransform {
  readonly #x: Routed;
  #request: ClaudeRequest | undefined;
  #ctx: CompletionContext | undefined;
  #headers: IncomingHttpHeaders = {};
  /** The translated body per backend id (a cloud's layout depends on the backend, Anthropic's on its model). */
  #bodies = new Map<string, OutgoingBody>();

  constructor(x: Routed) {
    this.#x = x;
  }

  prepare(plan: RequestPlan): void {
    if (!plan.backends.some(speaksClaude)) return;
    const others = plan.backends.filter((b) => !speaksClaude(b));
    let body: unknown;
    try {
      body = JSON.parse(plan.json!.toString('utf8'));
    } catch {
      body = undefined;
    }
    const translated = chatToClaude(body, this.#x.route.defaultMaxOutputTokens);
    if (!translated.ok) {
      // What Anthropic cannot carry may still go to the route's OpenAI-compatible backends, which take it as it is.
      if (others.length === 0) throw translated.error;
      plan.backends = others;
      return;
    }
    this.#request = translated.value.request;
    this.#headers = plan.headers;
    this.#ctx = {
      id: `chatcmpl-${randomBytes(12).toString('hex')}`,
      created: Math.floor(Date.now() / 1000),
      model: plan.member('model') ?? this.#x.route.model,
      includeUsage: translated.value.includeUsage,
    };
    // A cloud adapter that refuses the request (it never does for a create) leaves its backend out.
    plan.backends = plan.backends.filter((b) => !speaksClaude(b) || this.body(b) !== undefined);
    if (plan.backends.length === 0) throw new GatewayError(400, "The request cannot be laid out for this model's backends.", { code: 'invalid_request' });
  }

  body(backend: CompiledBackend): OutgoingBody | undefined {
    const request = this.#request;
    if (!request || !speaksClaude(backend)) return undefined;
    const had = this.#bodies.get(backend.id);
    if (had) return had;
    const out = claudeBody(backend, request, this.#headers);
    if (out) this.#bodies.set(backend.id, out);
    return out;
  }

  onResponseStart(a: Answer): AnswerHandler | undefined {
    const ctx = this.#ctx;
    if (!ctx || !speaksClaude(a.backend)) return undefined;
    if (a.statusCode >= 300) return claudeErrorAnswer(a.headers);
    if (a.isStream) return claudeStream(ctx, cloudOf(a.backend) === 'bedrock' && isAwsEventStream(a.headers));
    // A stream request answered whole (a proxy that ignored `stream`) becomes a chat completion, which whole-stream,
    // wired later, tells as chunks; a stream its server labelled JSON is translated as a stream (told by its first byte).
    a.headers['content-type'] = JSON_TYPE;
    return this.#request?.stream ? labelledClaudeAnswer(ctx) : claudeCompletion(ctx);
  }
}
