// One sampled request's spans: the server span (the whole exchange, from arrival to the end of the response) and a
// client span per upstream attempt, children of it. Built by tracing.ts only for a request whose server span records
// (an unsampled one gets unsampled-trace.ts); the data plane reaches it through the ExchangeTrace hooks only.
// Attributes are bounded, non-secret values from the routing table and the protocol (never a header value, a key, a
// query string or, unless the content flag is on, a body).
import { type Attributes, type Context, type Span, SpanKind, SpanStatusCode, type TextMapPropagator, type Tracer } from '@opentelemetry/api';
import type { Exchange } from '../../dataplane/exchange/exchange.js';
import type { AttemptTrace, ExchangeTrace } from '../../dataplane/exchange/trace-hooks.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import type { Usage } from '../../model/usage.js';
import { AttemptSpan, setInput, setUsage } from './attempt-span.js';
import { type InputContent, inputContent } from './content.js';
import { contentMasks } from './content-masks.js';
import { providerName } from './provider-name.js';
import { A, OPERATION } from './span-names.js';

export interface SpanTools {
  readonly tracer: Tracer;
  readonly propagator: TextMapPropagator;
  /** Record prompts and completions (--trace-content); off by default. */
  readonly content: boolean;
}

export class ExchangeSpans implements ExchangeTrace {
  readonly traceId: string;
  /** Sampled, so exported: metric exemplars may name it. */
  readonly exemplarId: string;
  readonly #tools: SpanTools;
  readonly #span: Span;
  readonly #context: Context;
  readonly #x: Exchange;
  #attempt: AttemptSpan | undefined;
  /** The backend of the latest attempt: the one that answered, or was tried last. */
  #backend: CompiledBackend | undefined;
  #ttftSeconds: number | undefined;
  /** The prompt's recorded content (--trace-content), read once from the first attempt's body. */
  #input: InputContent | undefined;
  #responseModel: string | undefined;

  /** `span` records; `context` holds it. */
  constructor(tools: SpanTools, x: Exchange, span: Span, context: Context) {
    this.#tools = tools;
    this.#x = x;
    this.#span = span;
    this.#context = context;
    this.traceId = this.exemplarId = span.spanContext().traceId;
  }

  /** The usage the answer reported as its body completed (the tracing transform's onEnd): on the attempt that answered. */
  usage(u: Usage): void {
    this.#attempt?.usage(u);
  }

  attempt(backend: CompiledBackend, n: number, path: string, body: Buffer | undefined): AttemptTrace {
    const x = this.#x;
    if (n === 1 && body && this.#tools.content) {
      // A Messages API request goes to a native backend as Anthropic's body, to a translated one as chat's.
      this.#input = inputContent(body, contentMasks(x.route, backend), x.family === 'messages' && backend.api === 'anthropic');
      if (this.#input) setInput(this.#span, this.#input);
    }
    const op = x.family ? OPERATION[x.family] : 'chat';
    // The path without its query string: a backend authenticated by a query parameter carries its key there.
    const q = path.indexOf('?');
    const server = serverOf(backend);
    const attributes: Attributes = {
      [A.operation]: op,
      [A.provider]: providerName(backend),
      [A.requestModel]: backend.model,
      [A.method]: 'POST',
      [A.serverAddress]: server.address,
      [A.serverPort]: server.port,
      [A.urlFull]: backend.origin + (q < 0 ? path : path.slice(0, q)),
      [A.backend]: backend.name,
      [A.backendId]: backend.id,
      [A.attempt]: n,
    };
    const span = this.#tools.tracer.startSpan(`${op} ${backend.model}`, { kind: SpanKind.CLIENT, attributes }, this.#context);
    // The attempt is the GenAI client span: what it sent is its input, as on the server span.
    if (this.#input) setInput(span, this.#input);
    this.#attempt = new AttemptSpan(span, this.#tools.propagator);
    this.#backend = backend;
    return this.#attempt;
  }

  /** The first chunk of a streamed answer reached the client. */
  firstChunk(): void {
    if (this.#ttftSeconds !== undefined) return;
    // gen_ai.response.time_to_first_chunk, on both spans: from the request's arrival here, from the attempt's
    // start on the attempt. The conventions define no event for it, so none is sent.
    const now = performance.now();
    this.#ttftSeconds = (now - this.#x.start) / 1e3;
    this.#attempt?.firstChunk(now);
  }

  /** The model that answered, as the answer's body names it (read by the tracing transform). */
  answered(model: string): void {
    this.#responseModel = model;
    this.#attempt?.answered(model);
  }

  /** The answer's content (only with --trace-content), on the server span and the attempt that answered. */
  output(text: string): void {
    this.#span.setAttribute(A.outputMessages, text);
    this.#attempt?.output(text);
  }

  /** True when prompts and completions are recorded. */
  get content(): boolean {
    return this.#tools.content;
  }

  /**
   * At the exchange's end: the last attributes, then the spans end (an attempt still open ends with it). `name`: the
   * span's name before its route, the request's method (or `HTTP`).
   */
  end(name: string, status: number, route: string | undefined, usage?: Usage): void {
    const x = this.#x;
    const span = this.#span;
    this.#attempt?.end();
    span.setAttribute(A.status, status);
    if (route !== undefined) {
      span.setAttribute(A.route, route);
      span.updateName(`${name} ${route}`);
    }
    if (x.token) {
      span.setAttributes({ [A.group]: x.token.group.name, [A.tokenNamespace]: x.token.namespace, [A.tokenName]: x.token.name });
    }
    if (x.family) {
      // The family is known before the model is resolved: a request for an unknown model has no route.
      span.setAttribute(A.operation, OPERATION[x.family]);
      if (x.route) span.setAttributes({ [A.requestModel]: x.route.model, [A.publicModel]: x.route.model });
    }
    if (this.#responseModel !== undefined) span.setAttribute(A.responseModel, this.#responseModel);
    if (x.backend !== undefined) span.setAttribute(A.backend, x.backend);
    if (this.#backend !== undefined) span.setAttribute(A.provider, providerName(this.#backend));
    if (x.attempts > 0) span.setAttribute(A.attempts, x.attempts);
    if (x.aborted) span.setAttribute(A.aborted, true);
    if (this.#ttftSeconds !== undefined) span.setAttribute(A.timeToFirstChunk, this.#ttftSeconds);
    if (usage) setUsage(span, usage);
    if (status >= 500) {
      span.setAttribute(A.errorType, String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }
}

/** server.address and server.port of a backend's origin, parsed once per compiled backend (not a URL parse per attempt). */
const servers = new WeakMap<CompiledBackend, { readonly address: string; readonly port: number }>();

function serverOf(backend: CompiledBackend): { readonly address: string; readonly port: number } {
  let server = servers.get(backend);
  if (!server) {
    const url = new URL(backend.origin);
    server = { address: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
    servers.set(backend, server);
  }
  return server;
}
