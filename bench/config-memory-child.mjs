// Child process of bench/config-apply.ts: the gateway's Kubernetes config path alone, from the compiled build
// (dist/), as `serve --source kubernetes` runs it — the Kubernetes source with status reporting (leader election,
// status writer) feeding the config pipeline and its routing table — so its RSS is not mixed with the fake API
// server's copy of the objects or with the TypeScript loader. The HTTP server is not started (its memory does not
// depend on the config). Nothing here forces a GC: the figures are what the process holds on its own after a quiet
// period, including the memory release after compiles that the gateway does when Node runs with --expose-gc (as
// the image runs it; src/runtime/memory-release.ts). Prints one JSON line.
const [dist, url, namespace] = process.argv.slice(2);
const mb = (n) => n / 2 ** 20;
const empty = process.memoryUsage().rss;
const { KubeConfig } = await import(`${dist}/config/sources/kube-client.js`);
const { KubernetesSourceWithStatus } = await import(`${dist}/gateway/kubernetes-source-with-status.js`);
const { ConfigPipeline } = await import(`${dist}/config/pipeline.js`);
const { TableHolder } = await import(`${dist}/config/table.js`);
const { createLogger } = await import(`${dist}/observability/logger.js`);
const { createMetrics } = await import(`${dist}/observability/metrics.js`);
const { MemoryRelease } = await import(`${dist}/server/memory-release.js`);

const kc = new KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: 'fake', server: url, skipTLSVerify: true }],
  users: [{ name: 'bench', token: 'bench' }],
  contexts: [{ name: 'fake', cluster: 'fake', user: 'bench', namespace }],
  currentContext: 'fake',
});
const logger = createLogger({ level: 'silent' });
const metrics = createMetrics({ defaultMetrics: false });
const tables = new TableHolder();
const pipeline = new ConfigPipeline({ tables, logger, metrics });
// As src/gateway/main.ts wires it.
const memory = new MemoryRelease({ gc: globalThis.gc });
pipeline.onCompiled(() => memory.notify());
const baseline = process.memoryUsage().rss;
const source = new KubernetesSourceWithStatus({
  kubeConfig: kc,
  namespaces: [namespace],
  secretSelector: 'modelgateway.io/secret=true',
  leaderElection: true,
  leaseNamespace: namespace,
  leaseName: 'model-gateway',
  identity: 'bench',
  logger,
  pipeline,
  registry: metrics.registry,
});
let cold = 0;
let snapshot;
await source.start((snap) => {
  snapshot = snap;
  const t0 = performance.now();
  pipeline.apply(snap);
  cold = performance.now() - t0;
});
// Recompiles of the same snapshot through the pipeline (table swap, status comparison): what a one-object change
// costs once per-object results are cached.
const warm = [];
for (let i = 0; i < 5; i++) {
  const t0 = performance.now();
  pipeline.apply(snapshot);
  warm.push(performance.now() - t0);
}
// Steady state: let the process settle as a serving one would (the memory release comes 5 s after the last
// compile), then measure.
await new Promise((r) => setTimeout(r, Number(process.env.SETTLE_MS ?? 10_000)));
const m = process.memoryUsage();
warm.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    rssMB: mb(m.rss),
    heapMB: mb(m.heapUsed),
    heapTotalMB: mb(m.heapTotal),
    externalMB: mb(m.external),
    arrayBuffersMB: mb(m.arrayBuffers),
    emptyMB: mb(empty),
    baselineMB: mb(baseline),
    coldCompileMs: cold,
    warmCompileMs: warm[2],
    tokens: tables.get()?.tokensByDigest.size,
    memoryReleases: memory.releases,
  }),
);
await source.stop();
