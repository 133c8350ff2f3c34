// npm run bench:config — how fast a `kubectl apply` takes effect, and what the config path costs.
//  1. apply → effective: time from the fake API server emitting the watch event until the gateway sees the
//     change (the routing table, and — when the HTTP app is wired — GET /v1/models), p50/p99 over ≥ 200 changes,
//     with a 1,000-token / 100-route / 20-group configuration loaded.
//  2. compile time of 10,000 GatewayTokens + 1,000 ModelRoutes + 100 Groups (full, and after a one-object change:
//     compile is pure and always whole, so a one-object change costs one full compile).
//  3. RSS with that configuration held by the Kubernetes source cache and the compiled table.
// Not a test: figures depend on the machine. Loopback only; bounded (a few seconds).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { compile } from '../src/compile/compile.js';
import { sha256Hex } from '../src/model/digest.js';
import { fakeClusterSource } from '../test/fake-apiserver/gateway-source.js';
import { startGateway } from '../src/gateway/main.js';
import { createLogger } from '../src/observability/logger.js';
import { createMetrics } from '../src/observability/metrics.js';
import type { SourcedObject } from '../src/compile/resources.js';
import { slimObject } from '../src/sources/kubernetes/kube-object.js';
import { applyDefaults, crdSchemas } from '../test/fake-apiserver/defaulting.js';
import { FakeApiServer } from '../test/fake-apiserver/server.js';
import { GATEWAY_NODE_FLAGS } from './lib/targets.js';
import type { KubeObj } from '../test/fake-apiserver/store.js';

const run = promisify(execFile);
const NS = 'bench';
const GV = 'modelgateway.io/v1alpha1';
const CHANGES = Number(process.env.BENCH_CHANGES ?? 250);

/**
 * What a real API server adds to an object created with `kubectl apply`: the last-applied-configuration annotation
 * (a second copy of the object) and a managedFields entry. The fake API server keeps both as given; the gateway
 * must not pay for them.
 */
function applied(o: KubeObj): KubeObj {
  const { metadata, ...rest } = o as KubeObj & { metadata: Record<string, unknown> };
  return {
    ...rest,
    metadata: {
      ...metadata,
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': `${JSON.stringify(o)}\n` },
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: o.apiVersion,
          time: '2026-01-01T00:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} } }, 'f:spec': { '.': {} } },
        },
      ],
    },
  } as KubeObj;
}

function config(tokens: number, routes: number, groups: number): KubeObj[] {
  return rawConfig(tokens, routes, groups).map(applied);
}

function rawConfig(tokens: number, routes: number, groups: number): KubeObj[] {
  const out: KubeObj[] = [];
  out.push({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'upstream', namespace: NS, labels: { 'modelgateway.io/secret': 'true' } },
    stringData: { apiKey: 'sk-bench' },
  });
  for (let r = 0; r < routes; r++) {
    out.push({
      apiVersion: GV,
      kind: 'ModelRoute',
      metadata: { name: `model-${r}`, namespace: NS },
      spec: {
        backends: [
          { name: 'primary', baseURL: 'http://127.0.0.1:9/v1', apiKeySecretRef: { name: 'upstream', key: 'apiKey' } },
          { name: 'fallback', baseURL: 'http://127.0.0.1:10/v1', priority: 1 },
        ],
      },
    });
  }
  for (let g = 0; g < groups; g++)
    out.push({ apiVersion: GV, kind: 'Group', metadata: { name: `group-${g}`, namespace: NS }, spec: { models: [`model-${g}*`, 'model-1'] } });
  for (let t = 0; t < tokens; t++) {
    if (t % 2 === 0) {
      out.push({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: `key-${t}`, namespace: NS, labels: { 'modelgateway.io/secret': 'true' } },
        stringData: { token: `mg-bench-${t}` },
      });
      out.push({
        apiVersion: GV,
        kind: 'GatewayToken',
        metadata: { name: `token-${t}`, namespace: NS },
        spec: { group: `group-${t % groups}`, secretRef: { name: `key-${t}`, key: 'token' } },
      });
    } else {
      out.push({
        apiVersion: GV,
        kind: 'GatewayToken',
        metadata: { name: `token-${t}`, namespace: NS },
        spec: { group: `group-${t % groups}`, sha256: sha256Hex(`mg-bench-${t}`) },
      });
    }
  }
  return out;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const ms = (n: number) => `${n.toFixed(1)} ms`;

interface Latency {
  table: number[];
  http: number[];
}

async function applyToEffective(): Promise<Latency> {
  const api = new FakeApiServer();
  await api.start();
  for (const o of config(1000, 100, 20)) api.apply(o);
  // The real gateway: HTTP API, pipeline, status writer and leader election, fed by the Kubernetes source.
  const gw = await startGateway({
    source: fakeClusterSource(api.url, NS, 'bench'),
    host: '127.0.0.1',
    port: 0,
    metricsPort: null,
    demo: false,
    logger: createLogger({ level: 'silent' }),
    metrics: createMetrics({ defaultMetrics: false }),
  });
  await gw.ready;
  const out: Latency = { table: [], http: [] };
  for (let i = 0; i < CHANGES; i++) {
    // A token moves to another group (the `kubectl patch` a platform team would do). Odd tokens start in odd
    // groups; each touch of the same token alternates between group-2 and group-4, so every patch is a real change.
    const t = 1 + 2 * (i % 50);
    const target = 2 + 2 * (Math.floor(i / 50) % 2);
    const digest = sha256Hex(`mg-bench-${t}`);
    const seen = new Promise<number>((resolve) => {
      const off = gw.tables.onChange((table) => {
        if (table.tokensByDigest.get(digest)?.group.name === `group-${target}`) {
          off();
          resolve(performance.now());
        }
      });
    });
    const t0 = performance.now();
    api.patch('GatewayToken', NS, `token-${t}`, { spec: { group: `group-${target}` } });
    // A client polling /v1/models back to back: the first response listing the new group's model.
    for (;;) {
      const res = await fetch(`${gw.apiURL}/v1/models`, { headers: { authorization: `Bearer mg-bench-${t}` } });
      const body = (await res.json()) as { data: { id: string }[] };
      if (body.data.some((m) => m.id === `model-${target}`)) break;
    }
    out.http.push(performance.now() - t0);
    out.table.push((await seen) - t0);
  }
  await gw.close({ timeoutMs: 0 });
  await api.stop();
  return out;
}

/** Wall time and CPU time (user + system, all threads) of fn, in ms: CPU time is what the work costs even when
 * the machine is shared and the process waits for a core. */
function timed(fn: () => void): { wall: number; cpu: number } {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  fn();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000 };
}

function compileCost(): { full: number; fullCpu: number; oneChange: number; oneChangeCpu: number; objects: number } {
  // What the source hands to compile: objects as the API server returns them, cut down by the reflector.
  const objects: SourcedObject[] = config(10_000, 1_000, 100).map((object) => ({ object: slimObject(structuredClone(object) as never) as never }));
  // The API server returns Secrets with data (base64), not stringData, and custom resources with the CRD's defaults
  // filled in; compile what the source would see.
  const schemas = crdSchemas();
  for (const o of objects) {
    const schema = schemas[o.object.kind as string];
    if (schema) applyDefaults(o.object, schema);
    const x = o.object as { kind?: string; stringData?: Record<string, string>; data?: Record<string, string> };
    if (x.kind === 'Secret' && x.stringData) {
      x.data = Object.fromEntries(Object.entries(x.stringData).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
      delete x.stringData;
    }
  }
  compile(objects.map((o) => ({ object: structuredClone(o.object) }))); // warm-up (JIT)
  // Cold: every object new to compile (first load, or a relist), so every object is validated.
  const runs: { wall: number; cpu: number }[] = [];
  for (let i = 0; i < 5; i++) {
    const fresh = objects.map((o) => ({ object: structuredClone(o.object) }));
    runs.push(timed(() => compile(fresh)));
  }
  // A one-object change: the source hands over the same object instances except the changed one.
  compile(objects);
  const one: { wall: number; cpu: number }[] = [];
  for (let i = 0; i < 5; i++) {
    const changed = objects.map((o) =>
      o.object.kind === 'GatewayToken' && o.object.metadata?.name === 'token-1'
        ? { object: { ...o.object, spec: { ...(o.object as any).spec, group: `group-${2 + (i % 2)}` } } }
        : o,
    );
    one.push(timed(() => compile(changed)));
  }
  return {
    full: pct(
      runs.map((r) => r.wall),
      50,
    ),
    fullCpu: pct(
      runs.map((r) => r.cpu),
      50,
    ),
    oneChange: pct(
      one.map((r) => r.wall),
      50,
    ),
    oneChangeCpu: pct(
      one.map((r) => r.cpu),
      50,
    ),
    objects: objects.length,
  };
}

interface Memory {
  rssMB: number;
  heapMB: number;
  heapTotalMB: number;
  externalMB: number;
  emptyMB: number;
  baselineMB: number;
  coldCompileMs: number;
  warmCompileMs: number;
  tokens: number;
  memoryReleases: number;
}

/** The Node flags the container image and the bin run the gateway with (bench/lib/targets.ts, Dockerfile). */
export const RECOMMENDED_NODE_OPTIONS = GATEWAY_NODE_FLAGS.join(' ');

async function rss(): Promise<{ default: Memory; tuned: Memory }> {
  const root = join(import.meta.dirname, '..');
  await run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: root });
  const once = async (nodeOptions: string): Promise<Memory> => {
    // A fresh API server each time, so the second child does not find the first one's status writes and Lease.
    const api = new FakeApiServer();
    await api.start();
    for (const o of config(10_000, 1_000, 100)) api.apply(o);
    try {
      const child = join(import.meta.dirname, 'config-memory-child.mjs');
      const env = { ...process.env, NODE_OPTIONS: nodeOptions };
      const { stdout } = await run(process.execPath, [child, join(root, 'dist'), api.url, NS], { cwd: root, env });
      return JSON.parse(stdout.trim().split('\n').at(-1)!);
    } finally {
      await api.stop();
    }
  };
  return { default: await once(''), tuned: await once(RECOMMENDED_NODE_OPTIONS) };
}

const latency = await applyToEffective();
const cost = compileCost();
const mem = await rss();
console.log('\nmodel-gateway config benchmark (fake API server on loopback, real @kubernetes/client-node)\n');
console.log(`| measure | value |\n|---|---|`);
console.log(
  `| apply → effective: watch event → routing table swapped, p50 / p99 over ${latency.table.length} changes | ${ms(pct(latency.table, 50))} / ${ms(pct(latency.table, 99))} |`,
);
console.log(
  `| apply → effective: watch event → an HTTP client's GET /v1/models shows it, p50 / p99 / max | ${ms(pct(latency.http, 50))} / ${ms(pct(latency.http, 99))} / ${ms(Math.max(...latency.http))} |`,
);
console.log(
  `| compile ${cost.objects} objects (10,000 tokens, 1,000 routes, 100 groups + 5,001 Secrets), all new (first load / relist), median of 5: wall (CPU) | ${ms(cost.full)} (${ms(cost.fullCpu)}) |`,
);
console.log(
  `| compile after a one-object change (whole table rebuilt, unchanged objects not re-validated), median of 5: wall (CPU) | ${ms(cost.oneChange)} (${ms(cost.oneChangeCpu)}) |`,
);
const memRow = (label: string, m: Memory) =>
  `| ${label}: RSS (V8 heap used / reserved) | ${m.rssMB.toFixed(0)} MB (${m.heapMB.toFixed(0)} / ${m.heapTotalMB.toFixed(0)} MB) |`;
console.log(
  `| gateway's Kubernetes config path (dist/: source, status writer, leader election, pipeline, table), RSS: empty Node / with its modules loaded | ${mem.default.emptyMB.toFixed(0)} MB / ${mem.default.baselineMB.toFixed(0)} MB |`,
);
console.log(memRow('… holding that config read from the API server, 10 s after the last compile, plain `node` (no flags: no memory release)', mem.default));
console.log(
  memRow(
    `… the same with \`node ${RECOMMENDED_NODE_OPTIONS}\` (as the image and the bin run it; ${mem.tuned.memoryReleases} memory release(s) done)`,
    mem.tuned,
  ),
);
console.log(`| … first (cold) compile + status comparison of the ${mem.tuned.tokens} tokens etc., through the pipeline | ${ms(mem.tuned.coldCompileMs)} |`);
console.log(`| … recompile + status comparison through the pipeline, as after a one-object change (median of 5) | ${ms(mem.tuned.warmCompileMs)} |`);
console.log(
  `\nnode ${process.version}, ${new Date().toISOString()}, load average ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} on ${(await import('node:os')).availableParallelism()} CPUs`,
);
