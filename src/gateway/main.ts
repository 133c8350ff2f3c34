// Wiring only: logger, metrics, demo backend, config source → pipeline → table, the API server and the metrics
// server on their own ports, readiness, and graceful drain. `serve` and the integration tests both start here.
import type { AddressInfo } from 'node:net';
import { DEFAULT_BODY_LIMITS, type BodyLimits } from '../model/body-limits.js';
import { closeApp, createApp, limitsOf } from './app.js';
import type { LimitsOptions } from '../features/limits/limits.js';
import type { UsageMetricsOptions } from '../features/usage/usage-metrics.js';
import type { UsageOptions } from '../features/usage/usage-transform.js';
import { usageSnapshot } from '../features/limits/usage-status.js';
import type { UsageSnapshot } from '../model/usage-limits.js';
import { ConfigPipeline } from '../runtime/pipeline.js';
import { MemoryRelease } from '../runtime/memory-release.js';
import type { ConfigSource } from '../sources/source.js';
import { TableHolder } from '../model/routing-table.js';
import { startDemoUpstream } from '../demo/demo-upstream.js';
import { DemoOnDemand } from './demo-on-demand.js';
import { TrafficQuiet } from '../runtime/traffic-quiet.js';
import { Identities } from '../dataplane/upstream/identity/identities.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { createMetrics, type Metrics } from '../observability/metrics.js';
import { listenDrainable, type DrainResult } from '../dataplane/server/drainable-server.js';
import { metricsHandler } from '../dataplane/server/metrics-handler.js';
import { protocolAnswerLog } from '../dataplane/observe/access-log.js';
import { requestIdOf } from '../dataplane/request/request-id.js';
import type { Tracing } from '../features/tracing/tracing.js';

/** The last spans get at least this long to reach the collector, even when the drain used its whole deadline. */
const MIN_TRACE_FLUSH_MS = 1_000;

interface SourceContext {
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Every compile result (e.g. for the Kubernetes status writer: pipeline.onCompiled). */
  readonly pipeline: ConfigPipeline;
  /** What the limits of Groups and GatewayTokens have counted now: status.usage, and the budget Events. */
  readonly usage: () => Promise<UsageSnapshot>;
  /** Which backends could not obtain their run-time credential (for their routes' status). */
  readonly credentials: Identities;
}

export interface GatewayOptions {
  /** Builds the config source (file or Kubernetes) once the logger and metrics exist. */
  readonly source: (ctx: SourceContext) => ConfigSource;
  /** API listen address (default 0.0.0.0:8080). */
  readonly host?: string;
  readonly port?: number;
  /** Metrics listen address (default: the API host, port 9090); null serves no metrics port (cluster workers). */
  readonly metricsHost?: string;
  readonly metricsPort?: number | null;
  /** Log level when no logger is given (default info). */
  readonly logLevel?: string;
  readonly logger?: Logger;
  readonly metrics?: Metrics;
  /** How long close() lets in-flight requests finish (default 25 s). */
  readonly drainTimeoutMs?: number;
  readonly bodyLimits?: BodyLimits;
  /** Budget of buffered request bodies (see AppDeps.maxBufferedBytes); default derived from the memory limit. */
  readonly maxBufferedBytes?: number;
  /** API port: time a client has to send the request headers, and the whole request (see ListenOptions). */
  readonly headersTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
  /** Start the built-in demo backend that `demo://` routes use (default true; it listens on loopback only). */
  readonly demo?: boolean;
  /** Sealed-id HMAC keys (first signs, all verify). Default: a random key and a warning (see AppDeps.idKeys). */
  readonly idKeys?: readonly Uint8Array[];
  /** Where limit counters live (see AppDeps.usageLimits). */
  readonly usageLimits?: LimitsOptions;
  /** Redis of kept responses (see AppDeps.responsesRedisUrl). */
  readonly responsesRedisUrl?: string;
  /** Usage metrics per GatewayToken (see AppDeps.usageMetrics). */
  readonly usageMetrics?: UsageMetricsOptions;
  /** How usage is read and priced (see AppDeps.usage). */
  readonly usage?: UsageOptions;
  /** OpenTelemetry tracing (features/tracing/); absent: off. Shut down (its queue exported) after the drain. */
  readonly tracing?: Tracing;
}

export interface GatewayHandle {
  readonly apiAddress: AddressInfo;
  /** Undefined when started with metricsPort: null. */
  readonly metricsAddress: AddressInfo | undefined;
  /** http://host:port of the API and metrics servers (for tests and logs). */
  readonly apiURL: string;
  readonly metricsURL: string | undefined;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly tables: TableHolder;
  /** Subscribe with pipeline.onCompiled(...) to see every compile result (e.g. a status writer). */
  readonly pipeline: ConfigPipeline;
  /** Resolves after the first complete config load; rejects if the source cannot produce one. */
  readonly ready: Promise<void>;
  /** Readiness as /readyz reports it: loaded, the limits store answered, and not draining. */
  isReady(): boolean;
  /** Requests received on the API port since start, and those whose response is not over yet. */
  received(): number;
  inFlight(): number;
  /**
   * Graceful shutdown: readiness fails, the API port stops accepting, in-flight requests (streams included)
   * get up to `timeoutMs` (default drainTimeoutMs) to finish, then the rest are cut; then upstream pools,
   * the config source, the demo backend and the metrics server close. Idempotent.
   */
  close(options?: { timeoutMs?: number }): Promise<DrainResult>;
}

export async function startGateway(options: GatewayOptions): Promise<GatewayHandle> {
  const logger = options.logger ?? createLogger({ level: options.logLevel ?? 'info' });
  const metrics = options.metrics ?? createMetrics({ exemplars: options.tracing !== undefined });
  const host = options.host ?? '0.0.0.0';
  const drainTimeoutMs = options.drainTimeoutMs ?? 25_000;
  const tables = new TableHolder();
  const cleanups: Array<() => Promise<unknown>> = [];
  const unwind = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  };

  try {
    const pipeline = new ConfigPipeline({ tables, logger, metrics });
    cleanups.push(async () => pipeline.stop());
    const demo = new DemoOnDemand(pipeline, (options.demo ?? true) ? startDemoUpstream : undefined, logger);
    cleanups.push(() => demo.close());
    // After config bursts, hand the compiles' memory back (memory-release.ts; needs --expose-gc, as the image runs).
    // A burst of traffic that has ended is handed back too (traffic-quiet.ts, once the API server listens), and no
    // release pauses a busy gateway.
    let traffic: TrafficQuiet | undefined;
    const memory = new MemoryRelease({ gc: globalThis.gc, logger, busy: () => traffic?.busy() ?? false });
    pipeline.onCompiled(() => memory.notify());
    cleanups.push(async () => memory.stop());
    let draining = false;
    const loaded = () => pipeline.loaded && !draining;

    const metricsServer =
      options.metricsPort === null
        ? undefined
        : await listenDrainable(
            metricsHandler({ metrics: () => metrics.registry.metrics(), contentType: metrics.registry.contentType, openMetrics: metrics.openMetrics }),
            { host: options.metricsHost ?? host, port: options.metricsPort ?? 9090 },
          );
    if (metricsServer) cleanups.push(() => metricsServer.drain(0));
    const identities = new Identities({ logger });
    const app = createApp({
      tables,
      identities,
      logger,
      metrics,
      isReady: loaded,
      bodyLimits: options.bodyLimits ?? DEFAULT_BODY_LIMITS,
      ...(options.maxBufferedBytes !== undefined ? { maxBufferedBytes: options.maxBufferedBytes } : {}),
      ...(options.idKeys && options.idKeys.length > 0 ? { idKeys: options.idKeys } : {}),
      ...(options.usageLimits ? { usageLimits: options.usageLimits } : {}),
      ...(options.responsesRedisUrl !== undefined ? { responsesRedisUrl: options.responsesRedisUrl } : {}),
      ...(options.usageMetrics ? { usageMetrics: options.usageMetrics } : {}),
      ...(options.usage ? { usage: options.usage } : {}),
      ...(options.tracing ? { tracing: options.tracing } : {}),
    });
    cleanups.push(() => closeApp(app));
    if (options.tracing) {
      const tracing = options.tracing;
      cleanups.push(() => tracing.shutdown());
    }
    // Live at once; ready only once the limits store has answered too (as /readyz says), so that the first burst of
    // traffic is counted. Requests that come before wait for it a moment (features/limits/redis-store.ts).
    const limits = limitsOf(app);
    const isReady = () => loaded() && limits.answered;
    if (options.usageLimits?.redisUrl) {
      void limits.ready(2_000).then((answered) => {
        if (!answered && !draining) logger.warn('limits store (Redis) not reachable at startup; not ready until it answers');
      });
    }
    const api = await listenDrainable(app, {
      host,
      port: options.port ?? 8080,
      prototypes: { request: app.request, response: app.response },
      onProtocolAnswer: protocolAnswerLog(logger, metrics),
      requestIdOf,
      ...(options.headersTimeoutMs !== undefined ? { headersTimeoutMs: options.headersTimeoutMs } : {}),
      ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    });
    cleanups.push(() => api.drain(0));
    const trafficQuiet = new TrafficQuiet(() => memory.notify(), api.received);
    traffic = trafficQuiet;
    trafficQuiet.start();
    cleanups.push(async () => trafficQuiet.stop());

    const source = options.source({
      logger,
      metrics,
      pipeline,
      usage: () => usageSnapshot(limitsOf(app), tables.get()),
      credentials: identities,
    });
    const ready = source.start(demo.apply).then(async () => {
      await demo.settled(); // the first snapshot may be waiting for the demo backend to listen
    });
    ready.then(
      async () => {
        if (!limits.answered) {
          logger.info({ configVersion: tables.get()?.version }, 'first config loaded; not ready until the limits store (Redis) answers');
          if (!(await limits.ready())) return; // closed first
        }
        logger.info({ configVersion: tables.get()?.version }, 'first config loaded; ready');
      },
      (err: unknown) =>
        // A drain stops the source: a load it ended is not a failure.
        draining
          ? logger.info('stopped before the first complete config load')
          : logger.error({ error: (err as Error).message }, 'the config source failed to load; not ready'),
    );
    logger.info({ api: api.url, metrics: metricsServer ? `${metricsServer.url}/metrics` : undefined }, 'model-gateway listening');

    let closing: Promise<DrainResult> | undefined;
    const close = (o: { timeoutMs?: number } = {}): Promise<DrainResult> => {
      closing ??= (async () => {
        draining = true;
        const timeoutMs = o.timeoutMs ?? drainTimeoutMs;
        const deadline = performance.now() + timeoutMs;
        logger.info({ inFlight: api.inFlight(), timeoutMs }, 'draining: not ready, no new connections, waiting for in-flight requests');
        // At the deadline the upstream requests still running are ended first (closeApp destroys the pools): streams
        // then end with an error event and waiting requests with a 503, which SDKs report as errors of their own,
        // rather than with a cut connection.
        const result = await api.drain(timeoutMs, () => void closeApp(app, { graceful: false }).catch(() => undefined));
        if (result.cut > 0) logger.warn({ cut: result.cut }, 'drain deadline reached; cut the remaining requests');
        else logger.info('drained: every in-flight request finished');
        // Upstream pools: let idle keep-alive sockets close politely when everything finished, else destroy.
        await closeApp(app, { graceful: result.cut === 0 }).catch((err: unknown) =>
          logger.warn({ error: (err as Error).message }, 'closing upstream pools failed'),
        );
        await source.stop().catch((err: unknown) => logger.warn({ error: (err as Error).message }, 'stopping the config source failed'));
        memory.stop();
        // Spans still queued are exported now, before the process ends: within what is left of the drain deadline (a
        // moment at least), so that a collector that hangs does not hold the exit past it.
        const left = Math.max(deadline - performance.now(), MIN_TRACE_FLUSH_MS);
        await options.tracing?.shutdown(left).catch((err: unknown) => logger.warn({ error: (err as Error).message }, 'exporting the last spans failed'));
        await ready.catch(() => undefined);
        await demo.close();
        await metricsServer?.drain(1_000);
        await new Promise<void>((r) => logger.flush(() => r()));
        return result;
      })();
      return closing;
    };

    return {
      apiAddress: api.address,
      metricsAddress: metricsServer?.address,
      apiURL: api.url,
      metricsURL: metricsServer?.url,
      logger,
      metrics,
      tables,
      pipeline,
      ready,
      isReady,
      received: api.received,
      inFlight: api.inFlight,
      close,
    };
  } catch (err) {
    await unwind();
    throw err;
  }
}

/** How a handler ends the process: `now` when it must not wait for anything (the drain is abandoned). */
export type OnExit = (code: number, options?: { now?: boolean }) => void;

/**
 * SIGTERM/SIGINT → graceful close, then `onExit(0)` (or 1 if the drain itself failed). A second signal
 * (at least 500 ms later) while draining stops waiting: `onExit(1, { now: true })`, unless `forceOnRepeat` is false (cluster workers: a
 * signal to the whole process group and the primary's own request arrive together; only the primary forces).
 */
export function installSignalHandlers(
  handle: Pick<GatewayHandle, 'close' | 'logger'>,
  onExit: OnExit,
  { signals = ['SIGTERM', 'SIGINT'], forceOnRepeat = true }: { signals?: readonly NodeJS.Signals[]; forceOnRepeat?: boolean } = {},
): () => void {
  let signalledAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalledAt !== undefined) {
      // The same Ctrl-C often arrives twice within milliseconds (from the terminal to the process group, and
      // forwarded by `npm start`); only a deliberate second signal forces the exit.
      if (!forceOnRepeat || Date.now() - signalledAt < 500) return;
      handle.logger.warn({ signal }, 'second signal while draining; exiting now');
      onExit(1, { now: true });
      return;
    }
    signalledAt = Date.now();
    handle.logger.info({ signal }, 'shutdown requested');
    handle.close().then(
      () => {
        // The last line of a clean stop: its absence in `kubectl logs --previous` means the process was killed.
        handle.logger.info({ exitCode: 0 }, 'stopped');
        onExit(0);
      },
      (err: unknown) => {
        handle.logger.error({ error: (err as Error).message }, 'shutdown failed');
        onExit(1);
      },
    );
  };
  for (const s of signals) process.on(s, onSignal);
  return () => {
    for (const s of signals) process.off(s, onSignal);
  };
}

/**
 * Last resort for a bug that escapes every handler: log it, drain what is in flight (bounded), exit 1 so the
 * orchestrator restarts a clean process. Continuing after an uncaught exception risks serving from broken state;
 * dying without a drain would cut every open stream. A second failure while draining exits at once.
 */
export function installCrashHandlers(
  handle: Pick<GatewayHandle, 'close' | 'logger'>,
  onExit: OnExit,
  { drainTimeoutMs = 5_000 }: { drainTimeoutMs?: number } = {},
): () => void {
  let crashing = false;
  const onCrash = (err: unknown, origin: string) => {
    const error = err instanceof Error ? { message: err.message, stack: err.stack } : { message: String(err) };
    handle.logger.fatal({ origin, error }, 'unexpected failure; draining and exiting');
    if (crashing) return onExit(1, { now: true });
    crashing = true;
    handle.close({ timeoutMs: drainTimeoutMs }).then(
      () => onExit(1),
      () => onExit(1),
    );
  };
  const onException = (err: unknown) => onCrash(err, 'uncaughtException');
  const onRejection = (err: unknown) => onCrash(err, 'unhandledRejection');
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
