// The tracing feature on the OpenTelemetry SDK: a tracer provider per gateway (its spans, the sampler from
// OTEL_TRACES_SAMPLER, its BatchSpanProcessor and OTLP exporter: otlp-exporter.ts); an express middleware that opens
// each request's server span (joining the client's trace from its W3C traceparent/tracestate, by the SDK's
// propagator) and sets the exchange's trace hooks; and a transform that reads what the answer tells a trace (first
// chunk, model, usage). A request the sampler drops costs one non-recording span and its propagation, nothing
// more (unsampled-trace.ts). Nothing here is registered globally (no global provider, propagator or context manager):
// contexts are passed explicitly, so several gateways in one process (the tests) keep their traces apart.
import { type Context, defaultTextMapGetter, ROOT_CONTEXT, SpanKind, trace, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { NextFunction, Request, Response } from 'express';
import type { Registry } from 'prom-client';
import { exchangeOf } from '../../dataplane/exchange/exchange.js';
import type { ExchangeTransform } from '../../dataplane/exchange/transform.js';
import { FAMILIES, FAMILY_PATHS, type Family } from '../../model/families.js';
import type { Logger } from '../../observability/logger.js';
import { ExchangeSpans, type SpanTools } from './exchange-trace.js';
import { ExportReport } from './export-report.js';
import { otlpExporter } from './otlp-exporter.js';
import { A, KNOWN_METHODS } from './span-names.js';
import type { TracingConfig } from './tracing-config.js';
import { tracingTransform } from './tracing-transform.js';
import { UnsampledTrace } from './unsampled-trace.js';

const PROBES = new Set(['/healthz', '/readyz']);

export interface TracingOptions {
  /** service.version of the resource. */
  readonly version: string;
  /** Record prompts and completions on the spans (--trace-content). Default off: never recorded. */
  readonly content?: boolean;
}

export class Tracing {
  readonly #provider: TracerProvider;
  readonly #tools: SpanTools;
  readonly #report = new ExportReport();
  /** Put on every exchange's answer (after the others): first chunk, response model, usage. */
  readonly transform: ExchangeTransform = tracingTransform();

  constructor(config: TracingConfig, options: TracingOptions) {
    // The SDK's default resource (telemetry.sdk.name, .language, .version), then the gateway's service, then
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, which win.
    const resource = defaultResource()
      .merge(resourceFromAttributes({ 'service.name': 'model-gateway', 'service.version': options.version }))
      .merge(detectResources({ detectors: [envDetector] }));
    const batch = Object.fromEntries(Object.entries(config.batch).filter(([, v]) => v !== undefined));
    const exporter = this.#report.wrap(otlpExporter(config, options.version, this.#report.rejected));
    this.#provider = new TracerProvider({
      resource,
      sampler: samplerOf(config),
      spanProcessors: [new BatchSpanProcessor({ exporter, ...batch, selfObsMeterProvider: this.#report.meterProvider })],
    });
    const tracer: Tracer = this.#provider.getTracer('model-gateway', options.version);
    this.#tools = { tracer, propagator: new W3CTraceContextPropagator(), content: options.content ?? false };
  }

  /** Express middleware, after the request id: opens the server span and ends it when the exchange ends. */
  readonly middleware = (req: Request, res: Response, next: NextFunction): void => {
    const path = req.path;
    if (PROBES.has(path)) return next();
    const x = exchangeOf(res);
    const tools = this.#tools;
    const parent: Context = tools.propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    // Named `{method}` until the route is known (HTTP conventions), then `{method} {http.route}`; `HTTP` for a method
    // HTTP does not define.
    const known = KNOWN_METHODS.has(req.method);
    const name = known ? req.method : 'HTTP';
    const span = tools.tracer.startSpan(name, { kind: SpanKind.SERVER }, parent);
    if (!span.isRecording()) {
      x.trace = new UnsampledTrace(tools.propagator, span);
      return next();
    }
    if (!known) span.setAttribute(A.methodOriginal, req.method);
    span.setAttributes({
      [A.method]: known ? req.method : '_OTHER',
      [A.urlPath]: path.length > 256 ? path.slice(0, 256) : path,
      [A.urlScheme]: 'http',
      [A.requestId]: x.id,
    });
    const spans = new ExchangeSpans(tools, x, span, trace.setSpan(parent, span));
    x.trace = spans;
    x.onSettled((usage) => {
      const status = x.aborted && !res.headersSent ? 499 : res.statusCode;
      // Settled: the request's usage is recorded. A turn of the event loop later the attempt in flight has been
      // ended by forwarding with what it knows (a body cut mid-way can close the response before the relay's
      // promise resumes forwarding).
      endNextTurn(() => spans.end(name, status, routeOf(x.family, path), usage));
    });
    next();
  };

  /** Counts exported and failed spans in the registry, and warns of failed exports in the log (export-report.ts). */
  reportTo(logger: Logger, registry: Registry): void {
    this.#report.attach(logger, registry);
  }

  /**
   * Exports what is still queued, then stops; gives up after `timeoutMs` (a collector that hangs would hold the exit
   * for the exporter's whole timeout, past the drain deadline). What was lost is written to the log either way.
   */
  async shutdown(timeoutMs?: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late =
      timeoutMs === undefined
        ? undefined
        : new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`the collector did not take the last spans within ${timeoutMs} ms`)), timeoutMs);
          });
    try {
      await (late ? Promise.race([this.#provider.shutdown(), late]) : this.#provider.shutdown());
    } finally {
      clearTimeout(timer);
      this.#report.flush();
    }
  }
}

/** Span ends due at the next turn of the event loop: one setImmediate runs all that a turn queued. */
let ending: (() => void)[] = [];

function endNextTurn(end: () => void): void {
  if (ending.push(end) === 1) setImmediate(endQueued);
}

function endQueued(): void {
  const due = ending;
  ending = [];
  for (const end of due) end();
}

/** Each family's http.route, made once. */
const FAMILY_ROUTES = Object.fromEntries(FAMILIES.map((f) => [f, `/v1${FAMILY_PATHS[f]}`])) as Record<Family, string>;

/** http.route: the route template, never the raw path of an object (ids stay out of span names). */
function routeOf(family: Family | undefined, path: string): string | undefined {
  if (family) return FAMILY_ROUTES[family];
  if (path === '/v1/models') return path;
  if (path.startsWith('/v1/models/')) return '/v1/models/{model}';
  return undefined;
}

function samplerOf(config: TracingConfig): Sampler {
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(config.ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.ratio) });
  }
}
