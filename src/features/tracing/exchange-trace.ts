// One request's spans: the server span (the whole exchange, from arrival to the end of the response) and a client
// span per upstream attempt, children of it. Built by tracing.ts for each request when tracing is on; the data
// plane reaches it through the ExchangeTrace hooks only. Attributes are bounded, non-secret values from the routing
// table and the protocol (never a header value, a key, a query string or, unless the content flag is on, a body).
import { type Context, type Span, SpanKind, SpanStatusCode, type TextMapPropagator, TraceFlags } from '@opentelemetry/api';
import type { AttemptTrace, ExchangeTrace } from '../../dataplane/exchange/trace-hooks.js';
import type { Exchange } from '../../dataplane/exchange/exchange.js';
import type { Family } from '../../model/families.js';
import type { CompiledBackend, CompiledRoute, CompiledToken } from '../../model/routing-table.js';
import type { Usage } from '../../model/usage.js';
import { type InputContent, inputContent } from './content.js';
import { contentMasks } from './content-masks.js';
import { providerName } from './provider-name.js';
import { type AttributeGroup, attributeGroup } from './otlp-protobuf.js';
import { type RecordedSpan, recorded, type SpanSettings, startSpan } from './recorded-span.js';
import type { OwnSpanContext } from './span-ids.js';
import { A, OPERATION } from './span-names.js';

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
  /** The backend of the latest attempt: the one that answered, or was tried last. */
  #backend: CompiledBackend | undefined;
  #ttftSeconds: number | undefined;
  /** The prompt's recorded content (--trace-content), read once from the first attempt's body. */
  #input: InputContent | undefined;
  #responseModel: string | undefined;

  constructor(tools: SpanTools, x: Exchange, span: Span, context: Context) {
    this.#tools = tools;
    this.#x = x;
    this.#span = span;
    this.#context = context;
    const sc = span.spanContext();
    this.traceId = sc.traceId;
    this.exemplarId = (sc.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? sc.traceId : undefined;
  }

  /** The usage the answer reported as its body completed (the tracing transform's onEnd): on the attempt that answered. */
  usage(u: Usage): void {
    this.#attempt?.usage(u);
  }

  /** False when the sampler dropped this trace: the work of filling attributes is skipped then. */
  get recording(): boolean {
    return this.#span.isRecording();
  }

  attempt(backend: CompiledBackend, n: number, path: string, body: Buffer | undefined): AttemptTrace {
    const x = this.#x;
    const server = recorded(this.#span);
    if (n === 1 && body && this.#tools.content && server) {
      this.#input = inputContent(body, contentMasks(x.route, backend));
      if (this.#input) setInput(server, this.#input);
    }
    const op = x.family ? OPERATION[x.family] : 'chat';
    // The path without its query string: a backend authenticated by a query parameter carries its key there.
    const q = path.indexOf('?');
    const target = attemptTarget(backend, q < 0 ? path : path.slice(0, q), op);
    const span = startSpan(this.#tools.spans, target.name, SpanKind.CLIENT, this.#context);
    const recording = recorded(span);
    if (recording) {
      recording.setAttributeGroup(target.group);
      recording.set(A.attempt, n);
      // The attempt is the GenAI client span: what it sent is its input, as on the server span.
      if (this.#input) setInput(recording, this.#input);
    }
    this.#attempt = new AttemptSpan(span);
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
    recorded(this.#span)?.set(A.outputMessages, text);
    this.#attempt?.output(text);
  }

  /** True when prompts and completions are recorded. */
  get content(): boolean {
    return this.#tools.content;
  }

  /** At the exchange's end: the last attributes, then the spans end (an attempt still open ends with it). */
  end(method: string, status: number, route: string | undefined, usage?: Usage): void {
    const x = this.#x;
    this.#attempt?.end();
    const span = recorded(this.#span);
    if (!span) return this.#span.end();
    span.set(A.status, status);
    if (route !== undefined) {
      span.set(A.route, route);
      span.updateName(serverName(method, route));
    }
    if (x.token) span.setAttributeGroup(tokenGroup(x.token));
    if (x.family) {
      // The family is known before the model is resolved: a request for an unknown model has no route.
      if (x.route) span.setAttributeGroup(routeGroup(x.route, x.family));
      else span.set(A.operation, OPERATION[x.family]);
    }
    if (this.#responseModel !== undefined) span.set(A.responseModel, this.#responseModel);
    if (x.backend !== undefined) span.set(A.backend, x.backend);
    if (this.#backend !== undefined) span.set(A.provider, providerName(this.#backend));
    if (x.attempts > 0) span.set(A.attempts, x.attempts);
    if (x.aborted) span.set(A.aborted, true);
    if (this.#ttftSeconds !== undefined) span.set(A.timeToFirstChunk, this.#ttftSeconds);
    if (usage) setUsage(span, usage);
    if (status >= 500) {
      span.set(A.errorType, String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }
}

function setInput(span: RecordedSpan, input: InputContent): void {
  if (input.messages !== undefined) span.set(A.inputMessages, input.messages);
  if (input.systemInstructions !== undefined) span.set(A.systemInstructions, input.systemInstructions);
}

/** The request's usage as the usage feature recorded it (the upstream's counts, or the gateway's estimate). */
function setUsage(span: RecordedSpan, usage: Usage): void {
  span.set(A.inputTokens, usage.inputTokens);
  span.set(A.outputTokens, usage.outputTokens);
  if (usage.estimated) span.set(A.usageEstimated, true);
  // The settled usage carries its cost (a number in the currency's units); an unknown cost is left off, never 0.
  if (usage.cost?.known) {
    span.set(A.cost, usage.cost.micros / 1e6);
    span.set(A.costCurrency, usage.cost.currency);
  }
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

// Attribute groups (otlp-protobuf.ts: encoded once) for what repeats from request to request, kept on the routing
// table's compiled objects: a new table compiles new objects, and the old groups go with the old table.
const tokenGroups = new WeakMap<CompiledToken, AttributeGroup>();
const routeGroups = new WeakMap<CompiledRoute, Map<Family, AttributeGroup>>();
const attemptTargets = new WeakMap<CompiledBackend, Map<string, AttemptTarget>>();
/** A backend's paths can carry ids (a video's): past this many, a path's target is made and not kept. */
const MAX_PATHS_PER_BACKEND = 32;

function tokenGroup(token: CompiledToken): AttributeGroup {
  let group = tokenGroups.get(token);
  if (!group) {
    group = attributeGroup({ [A.group.name]: token.group.name, [A.tokenNamespace.name]: token.namespace, [A.tokenName.name]: token.name });
    tokenGroups.set(token, group);
  }
  return group;
}

function routeGroup(route: CompiledRoute, family: Family): AttributeGroup {
  let byFamily = routeGroups.get(route);
  if (!byFamily) routeGroups.set(route, (byFamily = new Map()));
  let group = byFamily.get(family);
  if (!group) {
    group = attributeGroup({ [A.requestModel.name]: route.model, [A.publicModel.name]: route.model, [A.operation.name]: OPERATION[family] });
    byFamily.set(family, group);
  }
  return group;
}

/** What an attempt's span takes from its backend and upstream path: its name, and its attributes but its number. */
interface AttemptTarget {
  readonly name: string;
  readonly group: AttributeGroup;
}

/** An attempt's name and group, by backend and upstream path (one path: one operation). */
function attemptTarget(backend: CompiledBackend, path: string, op: string): AttemptTarget {
  let byPath = attemptTargets.get(backend);
  if (!byPath) attemptTargets.set(backend, (byPath = new Map()));
  let target = byPath.get(path);
  if (!target) {
    const server = serverOf(backend);
    const group = attributeGroup({
      [A.operation.name]: op,
      [A.provider.name]: providerName(backend),
      [A.requestModel.name]: backend.model,
      [A.method.name]: 'POST',
      [A.serverAddress.name]: server.address,
      [A.serverPort.name]: server.port,
      [A.urlFull.name]: backend.origin + path,
      [A.backend.name]: backend.name,
      [A.backendId.name]: backend.id,
    });
    target = { name: `${op} ${backend.model}`, group };
    if (byPath.size < MAX_PATHS_PER_BACKEND) byPath.set(path, target);
  }
  return target;
}

/**
 * The server span's name, `{method} {http.route}`, made once per method and route: a string built per request was
 * flattened again to be encoded. Routes are the gateway's templates, methods those node's HTTP parser accepts: both few.
 */
const serverNames = new Map<string, Map<string, string>>();

function serverName(method: string, route: string): string {
  let byRoute = serverNames.get(method);
  if (!byRoute) serverNames.set(method, (byRoute = new Map()));
  let name = byRoute.get(route);
  if (name === undefined) byRoute.set(route, (name = `${method} ${route}`));
  return name;
}

class AttemptSpan implements AttemptTrace {
  readonly #span: Span;
  /** performance.now() as the attempt started: its request is sent next. */
  readonly #start = performance.now();
  #label: string | undefined;
  #ended = false;

  constructor(span: Span) {
    this.#span = span;
  }

  /**
   * W3C Trace Context, as the SDK's W3CTraceContextPropagator writes it, without its checks of the ids: this
   * attempt's are the gateway's own, made valid (the propagator checks them a character at a time).
   */
  inject(headers: Record<string, string | string[]>): void {
    // The client's own traceparent/tracestate were copied with its headers; the upstream's parent is this attempt.
    // Every span startSpan makes has an OwnSpanContext, sampled or not.
    const sc = this.#span.spanContext() as OwnSpanContext;
    headers.traceparent = sc.traceparent();
    const state = sc.traceState?.serialize();
    if (state) headers.tracestate = state;
    else if (headers.tracestate !== undefined) delete headers.tracestate;
  }

  outcome(status: number | undefined, label: string): void {
    this.#label = label;
    const span = recorded(this.#span);
    if (!span) return;
    span.set(A.outcome, label);
    if (status !== undefined) span.set(A.status, status);
    if (status === undefined || status >= 500) {
      span.set(A.errorType, status === undefined ? label : String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }

  firstChunk(now: number): void {
    recorded(this.#span)?.set(A.timeToFirstChunk, (now - this.#start) / 1e3);
  }

  answered(model: string): void {
    recorded(this.#span)?.set(A.responseModel, model);
  }

  usage(u: Usage): void {
    // After the attempt ended, an attribute set now would not be exported: usage settles as the body ends, first.
    const span = recorded(this.#span);
    if (!this.#ended && span) setUsage(span, u);
  }

  output(text: string): void {
    recorded(this.#span)?.set(A.outputMessages, text);
  }

  end(o: { failedOver?: boolean; error?: unknown } = {}): void {
    if (this.#ended) return;
    this.#ended = true;
    const span = recorded(this.#span);
    if (span) {
      if (o.failedOver) {
        span.set(A.failoverReason, this.#label ?? 'unknown');
        span.setStatus({ code: SpanStatusCode.ERROR, message: `failed over: ${this.#label ?? 'unknown'}` });
      } else if (o.error !== undefined) {
        // A fixed description: an error's message may quote an upstream URL.
        const code = (o.error as { code?: unknown } | null)?.code;
        span.set(A.errorType, typeof code === 'string' ? code : 'body_failed');
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'the upstream body failed mid-way' });
      }
    }
    this.#span.end();
  }
}
