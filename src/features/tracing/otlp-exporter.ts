// The SDK's OTLP/HTTP trace exporter, configured as it configures itself from OTEL_EXPORTER_OTLP_* (endpoint,
// headers, timeout, compression; its retries on 429/502/503/504 after retry-after or a backoff), with the TLS files
// tracing-config.ts read at start given to its https agent. http/protobuf is @opentelemetry/exporter-trace-otlp-proto;
// http/json is what @opentelemetry/exporter-trace-otlp-http builds, from the same SDK parts with the JSON serializer
// (that package has no release matching these). Its self-metrics go to the global meter provider, which the gateway
// leaves unset (its metrics are prom-client's).
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate, type OTLPExporterNodeConfigBase } from '@opentelemetry/otlp-exporter-base/node-http';
import { JsonTraceSerializer, TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { TracingConfig } from './tracing-config.js';

export function otlpExporter(config: TracingConfig, version: string): SpanExporter {
  const options: OTLPExporterNodeConfigBase = {
    userAgent: `model-gateway/${version}`,
    httpAgentOptions: { keepAlive: true, ...config.tls },
  };
  if (config.protocol === 'http/protobuf') return new OTLPTraceExporter(options);
  const json = convertLegacyHttpOptions(options, 'TRACES', 'v1/traces', { 'Content-Type': 'application/json' });
  return new OTLPExporterBase<ReadableSpan[]>(
    createOtlpHttpExportDelegate(json, JsonTraceSerializer, 'otlp_http_json_span_exporter', TraceExporterMetricsHelper, undefined),
  );
}
