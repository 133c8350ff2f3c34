// The SDK's OTLP/HTTP trace exporter, configured as it configures itself from OTEL_EXPORTER_OTLP_* (endpoint,
// headers, timeout, compression), assembled from its public parts: its export delegate (serializer, bounded queue,
// partial-success handling) over the undici transport of otlp-transport.ts (retries, and the TLS files
// tracing-config.ts read at start). http/protobuf and http/json differ only in the SDK's serializer. Its
// self-metrics go to the global meter provider, which the gateway leaves unset (its metrics are prom-client's).
import { createOtlpNetworkExportDelegate, OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExporterMetrics } from '@opentelemetry/otlp-exporter-base/node-http';
import { JsonTraceSerializer, ProtobufTraceSerializer, TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { undiciTransport } from './otlp-transport.js';
import type { TracingConfig } from './tracing-config.js';

/** The SDK's own User-Agent product, after the gateway's (as its node:http transport sends it). */
const SDK_USER_AGENT = 'OTel-OTLP-Exporter-JavaScript';

export function otlpExporter(config: TracingConfig, version: string): SpanExporter {
  const json = config.protocol === 'http/json';
  const settings = convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': json ? 'application/json' : 'application/x-protobuf' });
  const transport = undiciTransport({
    url: settings.url,
    headers: settings.headers,
    compression: settings.compression,
    userAgent: `model-gateway/${version} ${SDK_USER_AGENT}`,
    tls: config.tls,
  });
  const component = json ? 'otlp_http_json_span_exporter' : 'otlp_http_span_exporter';
  const metrics = createOtlpHttpExporterMetrics(component, TraceExporterMetricsHelper, settings.url, undefined);
  return new OTLPExporterBase<ReadableSpan[]>(
    createOtlpNetworkExportDelegate(settings, json ? JsonTraceSerializer : ProtobufTraceSerializer, metrics, transport),
  );
}
