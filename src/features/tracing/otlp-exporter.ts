// The SDK's OTLP/HTTP trace exporter, configured as it configures itself from OTEL_EXPORTER_OTLP_* (endpoint,
// headers, timeout, compression), assembled from its public parts: its export delegate (serializer, bounded queue,
// partial-success handling) over the undici transport of otlp-transport.ts (retries, and the TLS files
// tracing-config.ts read at start). http/protobuf and http/json differ only in the SDK's serializer. Its
// self-metrics go to the global meter provider, which the gateway leaves unset (its metrics are prom-client's).
import { createOtlpNetworkExportDelegate, OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExporterMetrics } from '@opentelemetry/otlp-exporter-base/node-http';
import {
  type IExportTraceServiceResponse,
  type ISerializer,
  JsonTraceSerializer,
  ProtobufTraceSerializer,
  TraceExporterMetricsHelper,
} from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { undiciTransport } from './otlp-transport.js';
import type { TracingConfig } from './tracing-config.js';

/** The SDK's own User-Agent product, after the gateway's (as its node:http transport sends it). */
const SDK_USER_AGENT = 'OTel-OTLP-Exporter-JavaScript';

/**
 * `onRejected`: the spans a collector's partial success says it rejected (OTLP: accepted export, some spans refused),
 * told as the export delegate reads the answer, just before it reports the export a success.
 */
export function otlpExporter(config: TracingConfig, version: string, onRejected: (spans: number) => void = () => undefined): SpanExporter {
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
    createOtlpNetworkExportDelegate(settings, reading(json ? JsonTraceSerializer : ProtobufTraceSerializer, onRejected), metrics, transport),
  );
}

type TraceSerializer = ISerializer<ReadableSpan[], IExportTraceServiceResponse>;

/** The SDK's serializer, its answers read for a partial success's rejected spans (the SDK only logs them to diag). */
function reading(serializer: TraceSerializer, onRejected: (spans: number) => void): TraceSerializer {
  return {
    serializeRequest: (spans) => serializer.serializeRequest(spans),
    deserializeResponse: (data) => {
      const answer = serializer.deserializeResponse(data);
      // int64: a number from protobuf, a string in OTLP/JSON.
      const rejected = Number(answer.partialSuccess?.rejectedSpans ?? 0);
      if (rejected > 0) onRejected(rejected);
      return answer;
    },
  };
}
