// Whether tracing is on and how, from the standard OpenTelemetry environment variables: env in (and the files the
// certificate variables name, through the reader given), a config (or undefined: off) out, or an Error whose
// one-line message `serve` prints. The SDK's exporter configuration reads the other OTEL_EXPORTER_OTLP_* variables
// (endpoint, headers, timeout, compression) and the resource detector reads OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES; this file decides what the SDK no longer reads on its own (the sampler, the batch
// processor's settings), reads the certificates (the SDK would only warn, unseen, of a file it cannot read: here it
// stops `serve` at start, and otlp-exporter.ts gives what was read to the exporter), and decides when tracing is on.
import { readFileSync } from 'node:fs';

type Env = Readonly<Record<string, string | undefined>>;

type SamplerName = 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';

const SAMPLERS: readonly SamplerName[] = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
];

export interface TracingConfig {
  /** OTLP over HTTP, protobuf (the specification's default) or JSON. */
  readonly protocol: 'http/protobuf' | 'http/json';
  readonly sampler: SamplerName;
  /** For the ratio samplers: the share of traces kept, 0 to 1. */
  readonly ratio: number;
  /** The batch span processor (OTEL_BSP_*); undefined leaves the SDK's default. */
  readonly batch: {
    readonly scheduledDelayMillis: number | undefined;
    readonly exportTimeoutMillis: number | undefined;
    readonly maxQueueSize: number | undefined;
    readonly maxExportBatchSize: number | undefined;
  };
  /** The collector's CA and the gateway's client certificate and key (PEM), for an https endpoint. */
  readonly tls: { readonly ca?: Buffer; readonly cert?: Buffer; readonly key?: Buffer };
}

type ReadFile = (path: string) => Buffer;

/**
 * Undefined (tracing off) unless an OTLP endpoint is set (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
 * OTEL_EXPORTER_OTLP_ENDPOINT); also off with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
 */
export function tracingConfig(env: Env, read: ReadFile = readFileSync): TracingConfig | undefined {
  if (text(env.OTEL_SDK_DISABLED)?.toLowerCase() === 'true') return undefined;
  const exporter = text(env.OTEL_TRACES_EXPORTER)?.toLowerCase();
  if (exporter === 'none') return undefined;
  if (text(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) === undefined && text(env.OTEL_EXPORTER_OTLP_ENDPOINT) === undefined) return undefined;
  if (exporter !== undefined && exporter !== 'otlp')
    throw new Error(`OTEL_TRACES_EXPORTER=${exporter} is not supported; the gateway exports OTLP (otlp) or nothing (none)`);

  const protocol = (text(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? text(env.OTEL_EXPORTER_OTLP_PROTOCOL) ?? 'http/protobuf').toLowerCase();
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported; use http/protobuf or http/json (OTLP over HTTP)`);
  }
  // Read by the SDK's configuration, which would drop a bad value with a warning nobody sees: checked here instead.
  for (const name of ['OTEL_EXPORTER_OTLP_COMPRESSION', 'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION']) {
    const c = text(env[name]);
    if (c !== undefined && c !== 'gzip' && c !== 'none') throw new Error(`${name}=${c} is not supported; use gzip or none`);
  }
  for (const name of ['OTEL_EXPORTER_OTLP_TIMEOUT', 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT']) atLeastOne(env, name);
  const sampler = (text(env.OTEL_TRACES_SAMPLER) ?? 'parentbased_always_on').toLowerCase() as SamplerName;
  if (!SAMPLERS.includes(sampler)) throw new Error(`OTEL_TRACES_SAMPLER=${sampler} is not supported; use one of ${SAMPLERS.join(', ')}`);
  const arg = text(env.OTEL_TRACES_SAMPLER_ARG);
  const ratio = arg === undefined ? 1 : Number(arg);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) throw new Error(`OTEL_TRACES_SAMPLER_ARG=${arg} must be a ratio from 0 to 1`);
  return {
    protocol,
    sampler,
    ratio,
    batch: {
      scheduledDelayMillis: count(env, 'OTEL_BSP_SCHEDULE_DELAY'),
      // 0 is no setting the processor survives: a batch size of 0 exports empty batches in a busy loop until the
      // heap runs out, a queue of 0 drops every span, a timeout of 0 fails every export.
      exportTimeoutMillis: atLeastOne(env, 'OTEL_BSP_EXPORT_TIMEOUT'),
      maxQueueSize: atLeastOne(env, 'OTEL_BSP_MAX_QUEUE_SIZE'),
      maxExportBatchSize: atLeastOne(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
    },
    tls: tlsFiles(env, read),
  };
}

/** The certificate variables, the traces-specific one first, as the SDK reads them; an unreadable file stops here. */
function tlsFiles(env: Env, read: ReadFile): TracingConfig['tls'] {
  const file = (name: string): Buffer | undefined => {
    const variable = text(env[`OTEL_EXPORTER_OTLP_TRACES_${name}`]) !== undefined ? `OTEL_EXPORTER_OTLP_TRACES_${name}` : `OTEL_EXPORTER_OTLP_${name}`;
    const path = text(env[variable]);
    if (path === undefined) return undefined;
    try {
      return read(path);
    } catch (err) {
      throw new Error(`${variable}=${path} cannot be read (${(err as { code?: string }).code ?? (err as Error).message})`);
    }
  };
  const tls = { ca: file('CERTIFICATE'), cert: file('CLIENT_CERTIFICATE'), key: file('CLIENT_KEY') };
  if ((tls.cert === undefined) !== (tls.key === undefined)) {
    throw new Error('OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY are set together or not at all');
  }
  return Object.fromEntries(Object.entries(tls).filter(([, v]) => v !== undefined));
}

function text(v: string | undefined): string | undefined {
  const t = v?.trim();
  return t === undefined || t === '' ? undefined : t;
}

function count(env: Env, name: string): number | undefined {
  const t = text(env[name]);
  if (t === undefined) return undefined;
  const n = Number(t);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name}=${t} must be a whole number`);
  return n;
}

function atLeastOne(env: Env, name: string): number | undefined {
  const n = count(env, name);
  if (n === 0) throw new Error(`${name}=0 must be at least 1`);
  return n;
}
