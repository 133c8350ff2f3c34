// A Tracing built the way `serve` builds it, from OTEL_* variables, exporting to a test's loopback OTLP receiver.
import { Tracing } from '../../src/features/tracing/tracing.js';
import { tracingConfig } from '../../src/features/tracing/tracing-config.js';
import type { OtlpReceiver, ReceivedSpan } from '../fakes/otlp-receiver.js';
import { waitUntil } from '../support/wait.js';

/** A Tracing built the way `serve` builds it, from OTEL_* variables (set only while the exporter reads them). */
export function tracingWith(receiver: OtlpReceiver, extra: Record<string, string> = {}, content = false): Tracing {
  const env: Record<string, string> = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-tenant=team-a',
    OTEL_SERVICE_NAME: 'gateway-under-test',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
    OTEL_BSP_SCHEDULE_DELAY: '20',
    ...extra,
  };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return new Tracing(tracingConfig(env)!, { version: 'test', content });
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** The server span of the request with this id and its (first) attempt, once both reached the receiver. */
export async function spansOfRequest(receiver: OtlpReceiver, requestId: string): Promise<[ReceivedSpan, ReceivedSpan]> {
  const server = () => receiver.spans.find((s) => s.attributes['model_gateway.request_id'] === requestId);
  await waitUntil(() => server() !== undefined && receiver.spans.some((s) => s.parentSpanId === server()!.spanId), 5_000, 'the spans');
  const s = server()!;
  return [s, receiver.spans.find((a) => a.parentSpanId === s.spanId)!];
}

/** A span's attribute, parsed when it is text (recorded content is JSON text). */
export function attributeJson(span: ReceivedSpan, key: string): unknown {
  const v = span.attributes[key];
  return typeof v === 'string' ? JSON.parse(v) : v;
}
