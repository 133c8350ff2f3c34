// `model-gateway serve` (the default command): flags/env → startGateway, signals → graceful drain.
// Every user error is one line on stderr, `model-gateway: …`, with exit code 2 (bad usage) or 1 (runtime).
import cluster from 'node:cluster';
import { readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node'; // type only: erased at run time
import { FileSource } from '../sources/file/file-source.js';
// Types only: the gateway's modules are loaded once the flags are known to be good (a usage error, --help and
// --version answer without loading the server).
import type { GatewayOptions, OnExit } from '../gateway/main.js';
import { createLogger } from '../observability/logger.js';
import { loadIdKeys } from '../features/sealed-ids/id-keys.js';
import { defaultBufferedBudget, processMemoryLimit } from '../dataplane/request/body-budget.js';
import { parseServeArgs, renderHelp, type ServeOptions } from './serve-options.js';
import { type TracingConfig, tracingConfig } from '../features/tracing/tracing-config.js';

function packageVersion(): string {
  // src/cli/serve.ts and dist/cli/serve.js are both two levels below the package root.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

function fail(message: string, code: number): number {
  process.stderr.write(`model-gateway: ${message}\n`);
  return code;
}

export async function runServe(args: string[]): Promise<number | undefined> {
  const parsed = parseServeArgs(args, process.env);
  if (parsed.kind === 'help') {
    process.stdout.write(renderHelp(packageVersion()));
    return 0;
  }
  if (parsed.kind === 'version') {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  if (parsed.kind === 'error') return fail(parsed.message, 2);
  const options = parsed.options;

  // Sealed-id keys are read and decoded here so a bad key fails at start, not at the first video request.
  let idKeys: readonly Buffer[];
  try {
    idKeys = (await loadIdKeys({ keys: options.idKeys, keysFile: options.idKeysFile })).keys;
  } catch (err) {
    return fail((err as Error).message, 2);
  }

  // Tracing is configured by the standard OTEL_* variables, checked here so a bad value fails at start.
  let tracing: TracingConfig | undefined;
  try {
    tracing = tracingConfig(process.env);
  } catch (err) {
    return fail((err as Error).message, 2);
  }

  const source = await selectSource(options);
  if ('error' in source) return fail(source.error, source.code);
  if (options.workers > 1 && cluster.isPrimary) return (await import('./serve-cluster.js')).runPrimary(options, idKeys.length === 0);
  return serveGateway(options, source.factory, idKeys, tracing);
}

type SourceChoice = { factory: GatewayOptions['source'] } | { error: string; code: number };

/** The config source for the flags, or a one-line error. Checked before forking workers so it is reported once. */
async function selectSource(options: ServeOptions): Promise<SourceChoice> {
  if (options.source === 'kubernetes') return kubernetesSource(options);
  // The file source checks this again at start; checking here too gives one line before anything listens.
  if (!isDirectory(options.configDir)) return { error: `config directory ${options.configDir} does not exist or is not a directory`, code: 1 };
  return { factory: ({ logger }) => new FileSource({ dir: options.configDir, logger }) };
}

/**
 * --source kubernetes: the cluster from --kubeconfig / KUBECONFIG, else the in-cluster service account, else
 * ~/.kube/config; namespaces from --namespaces, else the pod's own, else (outside a pod) the kubeconfig context's.
 */
async function kubernetesSource(options: ServeOptions): Promise<SourceChoice> {
  // Loaded only for this source: the Kubernetes client's modules cost memory the file source does not need.
  const { loadKubeConfig, resolveWatchScope } = await import('../sources/kubernetes/kube-config.js');
  const { KubernetesSourceWithStatus } = await import('../gateway/kubernetes-source-with-status.js');
  let kubeConfig: KubeConfig;
  try {
    kubeConfig = loadKubeConfig(options.kubeconfig !== undefined ? { kubeconfig: options.kubeconfig } : {});
  } catch (err) {
    return { error: `--source kubernetes: ${(err as Error).message.split('\n')[0]}`, code: 2 };
  }
  const scope = resolveWatchScope(options.namespaces, kubeConfig, options.kubeconfig !== undefined ? { kubeconfig: options.kubeconfig } : {});
  if (scope === undefined) {
    return { error: '--source kubernetes needs --namespaces (MG_NAMESPACES), POD_NAMESPACE, or an in-cluster service account', code: 2 };
  }
  const { namespaces, leaseNamespace } = scope;
  // Unique per process: --workers start several processes with the same POD_NAME, and each one campaigns.
  const identity = `${options.podName ?? hostname()}${cluster.isWorker ? `/worker-${cluster.worker?.id}` : ''}`;
  return {
    factory: ({ logger, metrics, pipeline, usage, credentials }) =>
      new KubernetesSourceWithStatus({
        kubeConfig,
        namespaces,
        secretSelector: options.secretSelector,
        leaderElection: options.leaderElection,
        leaseNamespace,
        leaseName: options.leaseName,
        identity,
        logger,
        pipeline,
        registry: metrics.registry,
        usage,
        credentials,
        tuning: {
          // client-go's ratio (15 s / 10 s / 2 s): renew well inside the lease, step down before a standby may take over.
          election: {
            leaseDurationMs: options.leaseDurationMs,
            renewDeadlineMs: Math.round((options.leaseDurationMs * 2) / 3),
            retryPeriodMs: Math.round((options.leaseDurationMs * 2) / 15),
          },
          usageIntervalMs: options.usageStatusIntervalMs,
        },
      }),
  };
}

async function startTracing(config: TracingConfig, content: boolean) {
  const { Tracing } = await import('../features/tracing/tracing.js');
  return new Tracing(config, { version: packageVersion(), content });
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

async function serveGateway(
  options: ServeOptions,
  source: GatewayOptions['source'],
  idKeys: readonly Buffer[],
  tracing: TracingConfig | undefined,
): Promise<number | undefined> {
  // A cluster worker serves the API only; the primary serves the metrics port with every worker's metrics.
  const worker = cluster.isWorker;
  const { installCrashHandlers, installSignalHandlers, startGateway } = await import('../gateway/main.js');
  const { reportMetricsToPrimary, WORKER_READY } = await import('./serve-cluster.js');
  let handle: Awaited<ReturnType<typeof startGateway>>;
  try {
    handle = await startGateway({
      source,
      ...(worker ? { logger: createLogger({ level: options.logLevel }).child({ worker: cluster.worker?.id }) } : {}),
      host: options.host,
      port: options.port,
      metricsPort: worker ? null : options.metricsPort,
      logLevel: options.logLevel,
      drainTimeoutMs: options.drainTimeoutMs,
      bodyLimits: { jsonBytes: options.maxJsonBody, multipartBytes: options.maxUploadBody },
      maxBufferedBytes: options.maxBufferedBytes ?? Math.floor(defaultBufferedBudget(processMemoryLimit()) / options.workers),
      ...(idKeys.length > 0 ? { idKeys } : {}),
      usageLimits: {
        ...(options.redisUrl !== undefined ? { redisUrl: options.redisUrl } : {}),
        timeoutMs: options.limitsStoreTimeoutMs,
        failClosed: options.limitsFailClosed,
        currency: options.currency,
        allowUnpriced: options.allowUnpriced,
      },
      ...(options.responsesRedisUrl !== undefined ? { responsesRedisUrl: options.responsesRedisUrl } : {}),
      usageMetrics: { perToken: options.usageMetricsPerToken },
      usage: { currency: options.currency, readOn: { ms: options.usageReadOnMs, bytes: 1024 * 1024 } },
      // Loaded only when on: the SDK and its exporter are not needed otherwise.
      ...(tracing ? { tracing: await startTracing(tracing, options.traceContent) } : {}),
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
    if (e.code === 'EADDRINUSE' || e.code === 'EACCES' || e.code === 'EADDRNOTAVAIL') {
      return fail(`cannot listen on ${e.address ?? options.host}:${e.port ?? ''}: ${e.code}`, 1);
    }
    return fail(e.message.split('\n')[0]!, 1);
  }
  const h = handle;
  const exit: OnExit = (code, { now = false } = {}) => {
    process.exitCode = code;
    // Forced (a second signal): open connections would keep the loop alive, so end it here. pino flushes its
    // buffered lines on exit. A worker's IPC channel would keep it alive; otherwise everything is closed by now.
    if (now || worker) process.exit(code);
    // Alone, the process ends on its own; this only guards against a stray handle.
    setTimeout(() => process.exit(code), 2_000).unref();
  };
  // A stop asked for (a signal, the primary gone) before the first config load ends that load: not a failed start.
  let stopping = false;
  const stoppable = {
    logger: h.logger,
    close: (o?: { timeoutMs?: number }) => {
      stopping = true;
      return h.close(o);
    },
  };
  if (worker) {
    reportMetricsToPrimary(h.metrics.registry);
    installSignalHandlers(stoppable, exit, { forceOnRepeat: false });
    process.on('disconnect', () => void stoppable.close().then(() => exit(0))); // the primary is gone
  } else {
    installSignalHandlers(stoppable, exit);
  }
  installCrashHandlers(h, exit);
  h.ready.then(
    () => {
      if (worker) process.send?.({ type: WORKER_READY });
    },
    async (err: unknown) => {
      if (stopping) return;
      process.stderr.write(`model-gateway: ${(err as Error).message.split('\n')[0]}\n`);
      await h.close({ timeoutMs: 0 });
      exit(1);
    },
  );
  return undefined;
}
