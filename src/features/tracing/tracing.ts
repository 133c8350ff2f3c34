// The tracing feature: the gateway's spans (recorded-span.ts), sampled, batched and exported over OTLP/HTTP by
// the OpenTelemetry SDK; an express middleware that opens each request's server span (joining the client's trace
// from its W3C traceparent/tracestate) and sets the exchange's trace hooks; and a transform that reads what the
// answer tells a trace (first chunk, model, usage). Nothing here is registered globally (no global provider,
// propagator or context manager): contexts are passed explicitly, so several gateways in one process (the tests)
// keep their traces apart.
import { type Context, defaultTextMapGetter, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { createOtlpNetworkExportDelegate, OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExporterMetrics } from '@opentelemetry/otlp-exporter-base/node-http';
import { type ISerializer, JsonTraceSerializer, ProtobufTraceSerializer, TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace';
import type { NextFunction, Request, Response } from 'express';
import { exchangeOf } from '../../dataplane/exchange/exchange.js';
import { FAMILIES, FAMILY_PATHS, type Family } from '../../model/families.js';
import type { ExchangeTransform } from '../../dataplane/exchange/transform.js';
import { ExchangeSpans, type SpanTools } from './exchange-trace.js';
import { A } from './span-names.js';
import type { TracingConfig } from './tracing-config.js';
import { tracingTransform } from './tracing-transform.js';
import { encodeSpan, encodeTraceRequest } from './otlp-protobuf.js';
import { recorded, startSpan } from './recorded-span.js';
import { retrying } from './export-retry.js';
import { OtlpTransport } from './otlp-transport.js';
import { ExportReport } from './export-report.js';
import type { Logger } from '../../observability/logger.js';
import type { Registry } from 'prom-client';

const PROBES = new Set(['/healthz', '/readyz']);

export interface TracingOptions {
  /** service.version of the resource. */
  readonly version: string;
  /** Record prompts and completions on the spans (--trace-content). Default off: never recorded. */
  readonly content?: boolean;
}

export class Tracing {
  readonly #processor: SpanProcessor;
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
    this.#processor = new BatchSpanProcessor({ exporter: this.#report.wrap(otlpExporter(config, options.version)), ...batch });
    this.#tools = {
      spans: {
        sampler: samplerOf(config),
        processor: this.#processor,
        resource,
        scope: { name: 'model-gateway', version: options.version },
        encode: config.protocol === 'http/protobuf' ? encodeSpan : undefined,
      },
      propagator: new W3CTraceContextPropagator(),
      content: options.content ?? false,
    };
  }

  /** Express middleware, after the request id: opens the server span and ends it when the exchange ends. */
  readonly middleware = (req: Request, res: Response, next: NextFunction): void => {
    const path = req.path;
    if (PROBES.has(path)) return next();
    const x = exchangeOf(res);
    const parent: Context = this.#tools.propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    // Named `{method}` until the route is known (HTTP conventions), then `{method} {http.route}`.
    const span = startSpan(this.#tools.spans, req.method, SpanKind.SERVER, parent);
    const recording = recorded(span);
    if (recording) {
      recording.set(A.method, req.method);
      recording.set(A.urlPath, path.length > 256 ? path.slice(0, 256) : path);
      recording.set(A.urlScheme, 'http');
      recording.set(A.requestId, x.id);
    }
    const spans = new ExchangeSpans(this.#tools, x, span, trace.setSpan(parent, span));
    x.trace = spans;
    x.onSettled((usage) => {
      const status = x.aborted && !res.headersSent ? 499 : res.statusCode;
      // Settled: the request's usage is recorded. A turn of the event loop later the attempt in flight has been
      // ended by forwarding with what it knows (a body cut mid-way can close the response before the relay's
      // promise resumes forwarding).
      endNextTurn(() => spans.end(req.method, status, routeOf(x.family, path), usage));
    });
    next();
  };

  /** Counts exported and failed spans in the registry, and warns of failed exports in the log (export-report.ts). */
  reportTo(logger: Logger, registry: Registry): void {
    this.#report.attach(logger, registry);
  }

  /** Exports what is still queued, then stops. */
  async shutdown(): Promise<void> {
    await this.#processor.shutdown();
    this.#report.flush();
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

/** OTLP's protobuf encoding of spans (otlp-protobuf.ts); the SDK's decoder for the collector's answer. */
const protobufSerializer: ISerializer<ReadableSpan[], unknown> = {
  serializeRequest: encodeTraceRequest,
  deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
};

/**
 * The SDK's OTLP/HTTP trace exporter, built as its own exporter packages build it (its configuration from
 * OTEL_EXPORTER_OTLP_*: endpoint, headers, timeout, compression; its export queue), with two parts of the gateway's
 * own: the transport (otlp-transport.ts, with the SDK's retries in export-retry.ts), and for protobuf the encoder.
 * JSON goes through the SDK's serializer. The exporter's metrics go to the global meter provider, which the gateway
 * leaves unset (its metrics are prom-client's), as before.
 */
function otlpExporter(config: TracingConfig, version: string): SpanExporter {
  const json = config.protocol === 'http/json';
  const options = convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': json ? 'application/json' : 'application/x-protobuf' });
  const serializer = json ? JsonTraceSerializer : protobufSerializer;
  const transport = retrying(
    new OtlpTransport({
      url: options.url,
      headers: options.headers,
      compression: options.compression,
      tls: config.tls,
      userAgent: `model-gateway/${version}`,
    }),
  );
  const metrics = createOtlpHttpExporterMetrics('otlp_http_span_exporter', TraceExporterMetricsHelper, options.url, undefined);
  return new OTLPExporterBase(createOtlpNetworkExportDelegate(options, serializer, metrics, transport));
}

/** Each family's http.route, made once: the same string every request is hashed once by the encoder's cache. */
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
