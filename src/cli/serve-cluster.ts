// `serve --workers N` (N > 1): the primary process forks N workers that share the API port (node:cluster hands
// connections round-robin), serves the metrics port itself with every worker's metrics summed (cluster-metrics.ts),
// replaces a worker that dies after it was ready (worker-restarts.ts bounds how often), and on SIGTERM/SIGINT asks
// every worker to drain, then exits (killing a worker that outlives the drain timeout).
import cluster, { type Cluster, type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import { createLogger } from '../observability/logger.js';
import { generateIdKey, GENERATED_KEY_WARNING } from '../features/sealed-ids/id-keys.js';
import { listenDrainable } from '../dataplane/server/drainable-server.js';
import { metricsHandler } from '../dataplane/server/metrics-handler.js';
import { ClusterMetrics } from './cluster-metrics.js';
import type { ServeOptions } from './serve-options.js';
import { WorkerRestarts } from './worker-restarts.js';

/** Message a worker sends the primary once its first config load is complete. */
export const WORKER_READY = 'model-gateway:worker-ready';

/** How long after the drain timeout the primary waits for its workers to exit before it kills them. */
const SHUTDOWN_MARGIN_MS = 5_000;

/** What the primary uses of node:cluster (a test gives a fake, to order a worker's 'exit' before its 'disconnect'). */
export type PrimaryCluster = Pick<Cluster, 'fork' | 'on' | 'workers'>;

export async function runPrimary(options: ServeOptions, generateIdKeys = false, nodeCluster: PrimaryCluster = cluster): Promise<number | undefined> {
  const logger = createLogger({ level: options.logLevel }).child({ role: 'primary' });
  // Without configured sealed-id keys, every worker would mint its own and reject its siblings' ids: the
  // primary generates one and hands it to all workers (it still dies with the process, hence the warning).
  const workerEnv: Record<string, string> = {};
  if (generateIdKeys) {
    workerEnv['MG_ID_KEYS'] = generateIdKey().toString('hex');
    logger.warn(GENERATED_KEY_WARNING);
  }
  const aggregator = new ClusterMetrics(nodeCluster);
  let metrics: Awaited<ReturnType<typeof listenDrainable>>;
  try {
    metrics = await listenDrainable(metricsHandler({ metrics: () => aggregator.metrics(), contentType: aggregator.contentType }), {
      host: options.host,
      port: options.metricsPort,
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    process.stderr.write(`model-gateway: cannot listen on ${options.host}:${options.metricsPort}: ${e.code ?? e.message}\n`);
    aggregator.stop();
    return 1;
  }
  const metricsServer = metrics;

  const ready = new Set<number>();
  // Each live worker, the slot (0..N-1) it fills and when it started, so a slot that keeps dying young backs off. Not
  // cluster.workers: that keeps an exited worker until its IPC channel's 'disconnect', which can come after 'exit'.
  const slots = new Map<number, { worker: Worker; slot: number; startedAt: number }>();
  const live = () => [...slots.values()].map((s) => s.worker);
  const restarts = new WorkerRestarts();
  let stopping = false;
  let exitCode = 0;
  const fork = (slot: number): Worker => {
    const w = nodeCluster.fork(workerEnv);
    slots.set(w.id, { worker: w, slot, startedAt: Date.now() });
    w.on('message', (m: unknown) => {
      if (m && typeof m === 'object' && (m as { type?: unknown }).type === WORKER_READY) ready.add(w.id);
    });
    return w;
  };

  let deadline: NodeJS.Timeout | undefined;
  const finish = async () => {
    clearTimeout(deadline);
    aggregator.stop();
    await metricsServer.drain(1_000);
    logger.info({ exitCode }, 'all workers stopped');
    await new Promise<void>((r) => logger.flush(() => r()));
    process.exitCode = exitCode;
    setTimeout(() => process.exit(exitCode), 2_000).unref();
  };

  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason, workers: slots.size }, 'stopping: asking every worker to drain');
    for (const w of live()) w.process.kill('SIGTERM');
    if (slots.size === 0) return void finish();
    // A worker drains within the drain timeout and then needs a moment to close its connections and flush; one still
    // alive after that is hung, and would hold the pod until Kubernetes' SIGKILL at terminationGracePeriodSeconds.
    deadline = setTimeout(() => {
      for (const w of live()) {
        exitCode = 1;
        logger.error({ worker: w.id, pid: w.process.pid, afterMs: options.drainTimeoutMs + SHUTDOWN_MARGIN_MS }, 'a worker did not stop in time; killing it');
        w.process.kill('SIGKILL');
      }
    }, options.drainTimeoutMs + SHUTDOWN_MARGIN_MS);
  };

  nodeCluster.on('exit', (w, code, signal) => {
    aggregator.workerExited(w.id);
    const wasReady = ready.delete(w.id);
    const started = slots.get(w.id)!;
    slots.delete(w.id);
    if (!stopping) {
      if (wasReady) {
        const decision = restarts.died(started.slot, started.startedAt, Date.now());
        if (decision.replace) {
          logger.error({ worker: w.id, code, signal, delayMs: decision.delayMs }, 'a worker died; starting a replacement');
          setTimeout(() => {
            if (!stopping) fork(started.slot);
          }, decision.delayMs).unref();
          return;
        }
        exitCode = 1;
        logger.error({ worker: w.id, code, signal, deaths: decision.deaths }, 'workers keep dying; giving up');
        stop(`${decision.deaths} workers died within the restart window`);
        return;
      }
      // A worker that never became ready (bad config directory, port in use) would fail again: stop everything.
      exitCode = 1;
      stop(`worker ${w.id} exited before it was ready (code ${code ?? signal})`);
    } else if (code !== 0) {
      exitCode = 1;
    }
    if (stopping && slots.size === 0) void finish();
  });

  let signalledAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalledAt !== undefined) {
      // The same Ctrl-C often arrives twice within milliseconds (from the terminal to the process group, and forwarded
      // by `npm start`): only a signal 500 ms or more after the first forces the exit, as installSignalHandlers does.
      if (Date.now() - signalledAt < 500) return;
      logger.warn({ signal }, 'second signal; killing the workers now');
      for (const w of live()) w.process.kill('SIGKILL');
      process.exit(1);
    }
    signalledAt = Date.now();
    stop(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  for (let i = 0; i < options.workers; i++) fork(i);
  logger.info({ workers: options.workers, metrics: `${metricsServer.url}/metrics` }, 'started workers');
  return undefined;
}

/** In a worker: report the registry to the primary's aggregator (prom-client answers its IPC requests). */
export function reportMetricsToPrimary(registry: import('prom-client').Registry): void {
  new AggregatorRegistry(); // installs the worker-side IPC listener
  AggregatorRegistry.setRegistries([registry]);
}
