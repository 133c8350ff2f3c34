// A Tracing built the way `serve` builds it, from OTEL_* variables, exporting to a test's loopback OTLP receiver.
import { Tracing } from '../../src/features/tracing/tracing.js';
import { tracingConfig } from '../../src/features/tracing/tracing-config.js';
import type { OtlpReceiver } from '../fakes/otlp-receiver.js';

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
