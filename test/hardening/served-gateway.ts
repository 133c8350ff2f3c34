// The gateway as `serve` runs it (startGateway: the drainable server with its timeouts and protocol-error
// handling), on loopback with a static config compiled from inline manifests (or any config source) and logs kept
// in memory.
import { pino } from 'pino';
import { parseManifests } from '../../src/compile/manifests.js';
import { startGateway, type GatewayHandle, type GatewayOptions } from '../../src/gateway/main.js';
import { createMetrics } from '../../src/observability/metrics.js';

export type ServedOptions = Pick<
  GatewayOptions,
  'headersTimeoutMs' | 'requestTimeoutMs' | 'bodyLimits' | 'drainTimeoutMs' | 'usage' | 'maxBufferedBytes' | 'tracing'
>;

export async function startServedGateway(yaml: string, options: ServedOptions = {}): Promise<GatewayHandle & { logLines: string[] }> {
  const parsed = parseManifests(yaml, 'inline.yaml');
  if (parsed.errors.length > 0) throw new Error(`bad test manifests: ${JSON.stringify(parsed.errors)}`);
  return startServedGatewayWith(() => ({ start: async (onSnapshot) => onSnapshot({ objects: parsed.objects }), stop: async () => undefined }), options);
}

/** The same with any config source (e.g. a FileSource on a temporary directory); resolves once it is ready. */
export async function startServedGatewayWith(source: GatewayOptions['source'], options: ServedOptions = {}): Promise<GatewayHandle & { logLines: string[] }> {
  const logLines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
  const handle = await startGateway({
    source,
    host: '127.0.0.1',
    port: 0,
    metricsPort: null,
    logger,
    metrics: createMetrics({ defaultMetrics: false }),
    demo: false,
    ...options,
  });
  await handle.ready;
  return Object.assign(handle, { logLines });
}
