// Child process of bench/config-apply.ts: the gateway's side alone, from the compiled build (dist/), as it runs
// in production — Kubernetes source cache + compiled table — so its RSS is not mixed with the fake API server's
// copy of the objects or with the TypeScript loader. Prints one JSON line.
import { KubeConfig } from '@kubernetes/client-node';

const [dist, url, namespace] = process.argv.slice(2);
const { compile } = await import(`${dist}/config/compile.js`);
const { KubernetesSource } = await import(`${dist}/config/sources/kubernetes-source.js`);
const { TableHolder } = await import(`${dist}/config/table.js`);

const kc = new KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: 'fake', server: url, skipTLSVerify: true }],
  users: [{ name: 'bench', token: 'bench' }],
  contexts: [{ name: 'fake', cluster: 'fake', user: 'bench', namespace }],
  currentContext: 'fake',
});
globalThis.gc?.();
const baseline = process.memoryUsage().rss;
const source = new KubernetesSource({ kubeConfig: kc, namespaces: [namespace] });
const tables = new TableHolder();
let cold = 0;
let snapshot;
await source.start((snap) => {
  snapshot = snap;
  const t0 = performance.now();
  tables.set(compile(snap.objects).table);
  cold = performance.now() - t0;
});
// Recompiles of the same snapshot: what a one-object change costs once validation results are cached.
const warm = [];
for (let i = 0; i < 5; i++) {
  const t0 = performance.now();
  tables.set(compile(snapshot.objects).table);
  warm.push(performance.now() - t0);
}
// Steady state: after the burst of a full load V8 keeps reserved heap for a while; let it settle as a serving
// process would, then measure.
globalThis.gc?.();
await new Promise((r) => setTimeout(r, Number(process.env.SETTLE_MS ?? 10_000)));
globalThis.gc?.();
const m = process.memoryUsage();
warm.sort((a, b) => a - b);
console.log(JSON.stringify({
  rssMB: m.rss / 2 ** 20,
  heapMB: m.heapUsed / 2 ** 20,
  heapTotalMB: m.heapTotal / 2 ** 20,
  externalMB: m.external / 2 ** 20,
  arrayBuffersMB: m.arrayBuffers / 2 ** 20,
  baselineMB: baseline / 2 ** 20,
  coldCompileMs: cold,
  warmCompileMs: warm[2],
  tokens: tables.get()?.tokensByDigest.size,
}));
await source.stop();
