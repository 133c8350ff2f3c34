// Starts the real app (createApp) on 127.0.0.1:0 with a table compiled from inline YAML manifests, Secrets
// included, and returns what tests need: URLs, an SDK client factory, the metrics and captured log lines.
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import OpenAI from 'openai';
import { pino } from 'pino';
import { closeApp, createApp, limitsOf } from '../../src/gateway/app.js';
import type { BodyLimits } from '../../src/model/body-limits.js';
import { compile } from '../../src/compile/compile.js';
import { parseManifests } from '../../src/compile/manifests.js';
import { TableHolder } from '../../src/model/routing-table.js';
import type { UpstreamClient } from '../../src/dataplane/upstream/upstream-client.js';
import { REDACT_PATHS } from '../../src/observability/logger.js';
import { createMetrics, type Metrics } from '../../src/observability/metrics.js';
import type { BackendHealth } from '../../src/dataplane/policy/health.js';
import type { Random } from '../../src/dataplane/policy/plan.js';
import type { Limits, LimitsOptions } from '../../src/features/limits/limits.js';
import type { UsageMetricsOptions } from '../../src/features/usage/usage-metrics.js';
import type { UsageOptions } from '../../src/features/usage/usage-transform.js';
import type { Tracing } from '../../src/features/tracing/tracing.js';
import { Identities } from '../../src/dataplane/upstream/identity/identities.js';
import type { TokenCacheOptions } from '../../src/dataplane/upstream/identity/token-cache.js';
import { waitUntil } from '../support/wait.js';

export interface TestGateway {
  readonly origin: string;
  readonly baseURL: string;
  readonly tables: TableHolder;
  readonly metrics: Metrics;
  /** The run-time credentials of identity backends (problems() for what a route's status would show). */
  readonly identities: Identities;
  /** The limits feature (its limiter's view of the counters). */
  readonly limits: Limits;
  /** Every JSON log line written so far. */
  readonly logs: Record<string, unknown>[];
  /** Raw log text, to search for things that must never appear. */
  logText(): string;
  /** The access line (usage record) of the request with this id, once written. */
  record(reqId: string | null, timeoutMs?: number): Promise<Record<string, unknown>>;
  client(apiKey?: string): OpenAI;
  /** Recompiles the table from new manifests (a hot reload). */
  load(yaml: string): void;
  /** Client connections open on the API port (a client that left is gone from it). */
  connections(): Promise<number>;
  close(): Promise<void>;
}

export const ALICE_KEY = 'sk-alice-client-key-0123456789';

export interface GatewayOptions {
  bodyLimits?: BodyLimits;
  random?: Random;
  /** Start with no table at all (not ready). */
  empty?: boolean;
  /** Passive health with test thresholds (default: the app's own). */
  health?: BackendHealth;
  /** Outbound client owned by the test (e.g. to count pools); default: the app's own. */
  upstream?: UpstreamClient;
  /** Sealed-id keys (default: the app generates one). */
  idKeys?: Uint8Array[];
  /** Budget of buffered request bodies (default: the app's, derived from the memory limit). */
  maxBufferedBytes?: number;
  /** Store of limit counters (default: in-process). */
  usageLimits?: LimitsOptions;
  /** Redis of the items translated Responses answers gave (default: in-process). */
  responsesRedisUrl?: string;
  /** Usage metrics per GatewayToken (default: off). */
  usageMetrics?: UsageMetricsOptions;
  /** How usage is read and priced: the read-on bound after a client left, the currency (default: the app's). */
  usage?: UsageOptions;
  /** OpenTelemetry tracing (histograms then keep exemplars); default off. */
  tracing?: Tracing;
  /** Run-time credential cache options of identity backends (e.g. short token margins). */
  tokens?: TokenCacheOptions;
  /** Run-time credentials of identity backends; default: a new set logging to the gateway's log. */
  identities?: Identities;
}

export async function startGateway(yaml: string, options: GatewayOptions = {}): Promise<TestGateway> {
  const tables = new TableHolder();
  let version = 0;
  const load = (text: string) => {
    const parsed = parseManifests(text, 'inline.yaml');
    if (parsed.errors.length > 0) throw new Error(`bad test manifests: ${JSON.stringify(parsed.errors)}`);
    tables.set(compile(parsed.objects, { version: ++version }).table);
  };
  if (!options.empty) load(yaml);
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString('utf8'));
      cb();
    },
  });
  const logger = pino({ level: 'info', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);
  const metrics = createMetrics({ defaultMetrics: false, exemplars: options.tracing !== undefined });
  const identities = options.identities ?? new Identities({ logger, ...(options.tokens ? { tokens: options.tokens } : {}) });
  const app = createApp({
    tables,
    logger,
    metrics,
    isReady: () => tables.get() !== undefined,
    ...(options.bodyLimits ? { bodyLimits: options.bodyLimits } : {}),
    ...(options.random ? { random: options.random } : {}),
    ...(options.health ? { health: options.health } : {}),
    ...(options.upstream ? { upstream: options.upstream } : {}),
    ...(options.idKeys ? { idKeys: options.idKeys } : {}),
    ...(options.maxBufferedBytes !== undefined ? { maxBufferedBytes: options.maxBufferedBytes } : {}),
    ...(options.usageLimits ? { usageLimits: options.usageLimits } : {}),
    ...(options.responsesRedisUrl ? { responsesRedisUrl: options.responsesRedisUrl } : {}),
    ...(options.usageMetrics ? { usageMetrics: options.usageMetrics } : {}),
    ...(options.usage ? { usage: options.usage } : {}),
    ...(options.tracing ? { tracing: options.tracing } : {}),
    identities,
  });
  // With Redis, the app is not ready until its store has answered; tests start counting at once, so wait for it.
  if (options.usageLimits?.redisUrl && !(await limitsOf(app).ready(5_000))) throw new Error('the test Redis did not answer');
  const server: Server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const gateway: TestGateway = {
    origin,
    baseURL: `${origin}/v1`,
    tables,
    metrics,
    identities,
    limits: limitsOf(app),
    get logs() {
      return lines
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    logText: () => lines.join(''),
    record: (reqId, timeoutMs = 5_000) =>
      waitUntil(() => gateway.logs.find((l) => l['msg'] === 'request' && l['reqId'] === reqId), timeoutMs, `the usage record of ${reqId}`),
    client: (apiKey = ALICE_KEY) => new OpenAI({ apiKey, baseURL: `${origin}/v1`, maxRetries: 0, timeout: 10_000 }),
    load,
    connections: () => new Promise<number>((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n)))),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await closeApp(app);
    },
  };
  return gateway;
}

/** The standard test configuration: one route per family (one with a "/" in its id), a group, and tokens. */
/**
 * A client key beside a test's own route: its Secret (`<token>-key`), a Group allowed `models`, and the GatewayToken
 * in that group. The names show in the metrics' and access lines' labels.
 */
export function keyManifests(key: string, models: readonly string[], names: { group: string; token: string } = { group: 'team', token: 'dev' }): string {
  return `
apiVersion: v1
kind: Secret
metadata: {name: ${names.token}-key}
stringData: {token: ${key}}
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: ${names.group}}
spec: {models: [${models.map((m) => JSON.stringify(m)).join(', ')}]}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: ${names.token}}
spec: {group: ${names.group}, secretRef: {name: ${names.token}-key, key: token}}
`;
}

export function standardManifests(upstreamBaseURL: string, extra = ''): string {
  const route = (name: string, model: string, upstreamModel: string, endpoints: string[]) => `
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: ${name}}
spec:
  model: ${JSON.stringify(model)}
  endpoints: [${endpoints.join(', ')}]
  backends:
  - name: primary
    baseURL: ${upstreamBaseURL}
    apiKeySecretRef: {name: upstream-credentials, key: apiKey}
    model: ${upstreamModel}
---`;
  return `
apiVersion: v1
kind: Secret
metadata: {name: upstream-credentials}
stringData: {apiKey: sk-upstream-secret-abcdef}
---
apiVersion: v1
kind: Secret
metadata: {name: alice-key}
stringData: {token: ${ALICE_KEY}}
---
apiVersion: v1
kind: Secret
metadata: {name: expired-key}
stringData: {token: sk-expired-key}
---
apiVersion: v1
kind: Secret
metadata: {name: disabled-key}
stringData: {token: sk-disabled-key}
---
apiVersion: v1
kind: Secret
metadata: {name: narrow-key}
stringData: {token: sk-narrow-key}
---
${route('chat', 'gpt-4o-mini', 'upstream-chat', ['chat.completions', 'responses'])}
${route('embed', 'text-embedding-3-small', 'upstream-embed', ['embeddings'])}
${route('image', 'org/image-model', 'upstream-image', ['images.generations', 'images.edits'])}
${route('whisper', 'whisper-1', 'upstream-whisper', ['audio.transcriptions', 'audio.translations'])}
${route('tts', 'tts-1', 'upstream-tts', ['audio.speech'])}
${route('sora', 'sora-2', 'upstream-sora', ['videos'])}
${route('secret-model', 'forbidden-model', 'upstream-forbidden', ['chat.completions'])}
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: team-a}
spec:
  models: [gpt-4o-mini, text-embedding-3-small, "org/*", whisper-1, tts-1, sora-2, "extra-*"]
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: alice}
spec: {group: team-a, secretRef: {name: alice-key, key: token}}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: expired}
spec: {group: team-a, secretRef: {name: expired-key, key: token}, expiresAt: "2020-01-01T00:00:00Z"}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: disabled}
spec: {group: team-a, secretRef: {name: disabled-key, key: token}, disabled: true}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: narrow}
spec: {group: team-a, secretRef: {name: narrow-key, key: token}, models: [gpt-4o-mini]}
${extra}
`;
}

export const UPSTREAM_KEY = 'sk-upstream-secret-abcdef';

/** An extra ModelRoute for tests (public model names must start with "extra-" to be in team-a). */
export function extraRoute(
  model: string,
  backends: { name: string; baseURL: string; priority?: number; model?: string }[],
  timeouts?: Record<string, string>,
): string {
  const list = backends
    .map((b) => `  - {name: ${b.name}, baseURL: "${b.baseURL}", priority: ${b.priority ?? 0}, model: ${b.model ?? 'upstream-extra'}}`)
    .join('\n');
  return `---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: ${model}}
spec:
  model: ${model}
  backends:
${list}
${timeouts ? `  timeouts: ${JSON.stringify(timeouts)}` : ''}
`;
}

/**
 * An extra ModelRoute `extra-keepalive` (every family) with one backend that sends the standard upstream key, whose
 * streams get SSE keep-alive comments at `interval` while they wait for the upstream's first byte.
 */
export function keepAliveRoute(baseURL: string, interval = '20ms'): string {
  return `---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: extra-keepalive}
spec:
  model: extra-keepalive
  backends:
  - {name: slow, baseURL: "${baseURL}", apiKeySecretRef: {name: upstream-credentials, key: apiKey}}
  streaming: {keepAliveInterval: ${interval}}
`;
}

/** A loopback URL on which nothing listens (a port just released). */
export async function deadBaseURL(): Promise<string> {
  const { createServer } = await import('node:net');
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return `http://127.0.0.1:${port}/v1`;
}
