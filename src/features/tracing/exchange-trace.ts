// One request's spans: the server span (the whole exchange, from arrival to the end of the response) and a client
// span per upstream attempt, children of it. Built by tracing.ts for each request when tracing is on; the data
// plane reaches it through the ExchangeTrace hooks only. Attributes are bounded, non-secret values from the routing
// table and the protocol (never a header value, a key, a query string or, unless the content flag is on, a body).
import { type Context, defaultTextMapSetter, type Span, SpanKind, SpanStatusCode, type TextMapPropagator, TraceFlags, trace } from '@opentelemetry/api';
import type { AttemptTrace, ExchangeTrace } from '../../dataplane/exchange/trace-hooks.js';
import type { Exchange } from '../../dataplane/exchange/exchange.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import type { Usage } from '../../model/usage.js';
import { inputContent } from './content.js';
import { type SpanSettings, startSpan } from './recorded-span.js';
import { A, FIRST_TOKEN_EVENT, OPERATION } from './span-names.js';

export interface SpanTools {
  readonly spans: SpanSettings;
  readonly propagator: TextMapPropagator;
  /** Record prompts and completions (--trace-content); off by default. */
  readonly content: boolean;
}

export class ExchangeSpans implements ExchangeTrace {
  readonly traceId: string;
  readonly exemplarId: string | undefined;
  readonly #tools: SpanTools;
  readonly #span: Span;
  readonly #context: Context;
  readonly #x: Exchange;
  #attempt: AttemptSpan | undefined;
  #ttftSeconds: number | undefined;
  #responseModel: string | undefined;

  constructor(tools: SpanTools, x: Exchange, span: Span, context: Context) {
    this.#tools = tools;
    this.#x = x;
    this.#span = span;
    this.#context = context;
    const sc = span.spanContext();
    this.traceId = sc.traceId;
    this.exemplarId = (sc.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? sc.traceId : undefined;
    // The usage feature records every routed request's usage (at the latest when the exchange settles): the
    // attempt that answered carries it too, when it is still open.
    if (span.isRecording()) x.onUsage((u) => this.#attempt?.usage(u));
  }

  /** False when the sampler dropped this trace: the work of filling attributes is skipped then. */
  get recording(): boolean {
    return this.#span.isRecording();
  }

  attempt(backend: CompiledBackend, n: number, path: string, body: Buffer | undefined): AttemptTrace {
    const x = this.#x;
    if (n === 1 && body && this.#tools.content && this.recording) {
      const input = inputContent(body);
      if (input !== undefined) this.#span.setAttribute(A.inputMessages, input);
    }
    const op = x.family ? OPERATION[x.family] : 'chat';
    const span = startSpan(this.#tools.spans, `${op} ${backend.model}`, SpanKind.CLIENT, this.#context);
    if (span.isRecording()) setAttemptAttributes(span, backend, n, path, op);
    this.#attempt = new AttemptSpan(span, trace.setSpan(this.#context, span), this.#tools.propagator);
    return this.#attempt;
  }

  /** The first chunk of a streamed answer reached the client. */
  firstChunk(): void {
    if (this.#ttftSeconds !== undefined) return;
    const seconds = (performance.now() - this.#x.start) / 1e3;
    this.#ttftSeconds = seconds;
    // Times are left to the span, whose clock its own start and end use.
    this.#span.addEvent(FIRST_TOKEN_EVENT, { [A.timeToFirstChunk]: seconds });
    this.#attempt?.firstChunk();
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

  /** At the exchange's end: the last attributes, then the spans end (an attempt still open ends with it). */
  end(method: string, status: number, route: string | undefined): void {
    const x = this.#x;
    const span = this.#span;
    this.#attempt?.end();
    if (!span.isRecording()) return span.end();
    span.setAttribute(A.status, status);
    if (route !== undefined) {
      span.setAttribute(A.route, route);
      span.updateName(`${method} ${route}`);
    }
    if (x.token) {
      span.setAttribute(A.group, x.token.group.name);
      span.setAttribute(A.tokenNamespace, x.token.namespace);
      span.setAttribute(A.tokenName, x.token.name);
    }
    if (x.route) {
      span.setAttribute(A.requestModel, x.route.model);
      span.setAttribute(A.publicModel, x.route.model);
    }
    if (x.family) span.setAttribute(A.operation, OPERATION[x.family]);
    if (this.#responseModel !== undefined) span.setAttribute(A.responseModel, this.#responseModel);
    if (x.backend !== undefined) span.setAttribute(A.backend, x.backend);
    if (x.attempts > 0) span.setAttribute(A.attempts, x.attempts);
    if (x.aborted) span.setAttribute(A.aborted, true);
    if (this.#ttftSeconds !== undefined) span.setAttribute(A.timeToFirstChunk, this.#ttftSeconds);
    if (x.usage) setUsage(span, x.usage);
    if (status >= 500) {
      span.setAttribute(A.errorType, String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }
}

/** The request's usage as the usage feature recorded it (the upstream's counts, or the gateway's estimate). */
function setUsage(span: Span, usage: Usage): void {
  span.setAttribute(A.inputTokens, usage.inputTokens);
  span.setAttribute(A.outputTokens, usage.outputTokens);
  if (usage.estimated) span.setAttribute(A.usageEstimated, true);
}

/** server.address and server.port of a backend's origin, parsed once per compiled backend (a URL parse per attempt was a fifth of this file's time). */
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

function setAttemptAttributes(span: Span, backend: CompiledBackend, n: number, path: string, op: string): void {
  const server = serverOf(backend);
  // The path without its query string: a backend authenticated by a query parameter carries its key there.
  const q = path.indexOf('?');
  span.setAttribute(A.operation, op);
  span.setAttribute(A.requestModel, backend.model);
  span.setAttribute(A.method, 'POST');
  span.setAttribute(A.serverAddress, server.address);
  span.setAttribute(A.serverPort, server.port);
  span.setAttribute(A.urlFull, backend.origin + (q < 0 ? path : path.slice(0, q)));
  span.setAttribute(A.backend, backend.name);
  span.setAttribute(A.backendId, backend.id);
  span.setAttribute(A.attempt, n);
}

class AttemptSpan implements AttemptTrace {
  readonly #span: Span;
  readonly #context: Context;
  readonly #propagator: TextMapPropagator;
  #label: string | undefined;
  #ended = false;

  constructor(span: Span, context: Context, propagator: TextMapPropagator) {
    this.#span = span;
    this.#context = context;
    this.#propagator = propagator;
  }

  inject(headers: Record<string, string | string[]>): void {
    // The client's own traceparent/tracestate were copied with its headers; the upstream's parent is this attempt.
    delete headers.traceparent;
    delete headers.tracestate;
    this.#propagator.inject(this.#context, headers, defaultTextMapSetter);
  }

  outcome(status: number | undefined, label: string): void {
    this.#label = label;
    if (!this.#span.isRecording()) return;
    this.#span.setAttribute(A.outcome, label);
    if (status !== undefined) this.#span.setAttribute(A.status, status);
    if (status === undefined || status >= 500) {
      this.#span.setAttribute(A.errorType, status === undefined ? label : String(status));
      this.#span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }

  firstChunk(): void {
    this.#span.addEvent(FIRST_TOKEN_EVENT);
  }

  answered(model: string): void {
    if (this.#span.isRecording()) this.#span.setAttribute(A.responseModel, model);
  }

  usage(u: Usage): void {
    // After the attempt ended, an attribute set now would not be exported: usage settles as the body ends, first.
    if (!this.#ended && this.#span.isRecording()) setUsage(this.#span, u);
  }

  output(text: string): void {
    if (this.#span.isRecording()) this.#span.setAttribute(A.outputMessages, text);
  }

  end(o: { failedOver?: boolean; error?: unknown } = {}): void {
    if (this.#ended) return;
    this.#ended = true;
    const span = this.#span;
    if (span.isRecording()) {
      if (o.failedOver) {
        span.setAttribute(A.failoverReason, this.#label ?? 'unknown');
        span.setStatus({ code: SpanStatusCode.ERROR, message: `failed over: ${this.#label ?? 'unknown'}` });
      } else if (o.error !== undefined) {
        // A fixed description: an error's message may quote an upstream URL.
        const code = (o.error as { code?: unknown } | null)?.code;
        span.setAttribute(A.errorType, typeof code === 'string' ? code : 'body_failed');
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'the upstream body failed mid-way' });
      }
    }
    span.end();
  }
}
