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
import { compile } from '../src/config/compile.js';
import type { SourcedObject } from '../src/config/resources.js';
import { KubernetesSource } from '../src/config/sources/kubernetes-source.js';
import { TableHolder } from '../src/config/table.js';
import { kubeConfigFor } from '../test/fake-apiserver/kubeconfig.js';
import { FakeApiServer } from '../test/fake-apiserver/server.js';
import type { KubeObj } from '../test/fake-apiserver/store.js';

const run = promisify(execFile);
const NS = 'bench';
const GV = 'modelgateway.io/v1alpha1';
const CHANGES = Number(process.env.BENCH_CHANGES ?? 250);

function config(tokens: number, routes: number, groups: number): KubeObj[] {
  const out: KubeObj[] = [];
  out.push({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'upstream', namespace: NS, labels: { 'modelgateway.io/secret': 'true' } }, stringData: { apiKey: 'sk-bench' } });
  for (let r = 0; r < routes; r++) {
    out.push({
      apiVersion: GV, kind: 'ModelRoute', metadata: { name: `model-${r}`, namespace: NS },
      spec: { backends: [
        { name: 'primary', baseURL: 'http://127.0.0.1:9/v1', apiKeySecretRef: { name: 'upstream', key: 'apiKey' } },
        { name: 'fallback', baseURL: 'http://127.0.0.1:10/v1', priority: 1 },
      ] },
    });
  }
  for (let g = 0; g < groups; g++) out.push({ apiVersion: GV, kind: 'Group', metadata: { name: `group-${g}`, namespace: NS }, spec: { models: [`model-${g}*`, 'model-1'] } });
  for (let t = 0; t < tokens; t++) {
    if (t % 2 === 0) {
      out.push({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `key-${t}`, namespace: NS, labels: { 'modelgateway.io/secret': 'true' } }, stringData: { token: `mg-bench-${t}` } });
      out.push({ apiVersion: GV, kind: 'GatewayToken', metadata: { name: `token-${t}`, namespace: NS }, spec: { group: `group-${t % groups}`, secretRef: { name: `key-${t}`, key: 'token' } } });
    } else {
      out.push({ apiVersion: GV, kind: 'GatewayToken', metadata: { name: `token-${t}`, namespace: NS }, spec: { group: `group-${t % groups}`, sha256: t.toString(16).padStart(64, '0') } });
    }
  }
  return out;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const ms = (n: number) => `${n.toFixed(1)} ms`;

async function applyToEffective(): Promise<{ p50: number; p99: number; max: number; n: number }> {
  const api = new FakeApiServer();
  await api.start();
  for (const o of config(1000, 100, 20)) api.apply(o);
  const source = new KubernetesSource({ kubeConfig: kubeConfigFor(api.url, NS), namespaces: [NS] });
  const tables = new TableHolder();
  let version = 0;
  await source.start((snap) => tables.set(compile(snap.objects, { version: ++version }).table));
  const latencies: number[] = [];
  for (let i = 0; i < CHANGES; i++) {
    // A token moves to another group (the `kubectl patch` a platform team would do). Odd tokens start in odd
    // groups; each touch of the same token alternates between group-2 and group-4, so every patch is a real change.
    const t = 1 + 2 * (i % 50);
    const name = `token-${t}`;
    const target = `group-${2 + 2 * (Math.floor(i / 50) % 2)}`;
    const digest = t.toString(16).padStart(64, '0');
    const seen = new Promise<number>((resolve) => {
      const off = tables.onChange((table) => {
        if (table.tokensByDigest.get(digest)?.group.name === target) {
          off();
          resolve(performance.now());
        }
      });
    });
    const t0 = performance.now();
    api.patch('GatewayToken', NS, name, { spec: { group: target } });
    latencies.push((await seen) - t0);
  }
  await source.stop();
  await api.stop();
  return { p50: pct(latencies, 50), p99: pct(latencies, 99), max: Math.max(...latencies), n: latencies.length };
}

function compileCost(): { full: number; oneChange: number; objects: number } {
  const objects: SourcedObject[] = config(10_000, 1_000, 100).map((object) => ({ object: structuredClone(object) as never }));
  // The API server returns Secrets with data (base64), not stringData; compile what the source would see.
  for (const o of objects) {
    const x = o.object as { kind?: string; stringData?: Record<string, string>; data?: Record<string, string> };
    if (x.kind === 'Secret' && x.stringData) {
      x.data = Object.fromEntries(Object.entries(x.stringData).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
      delete x.stringData;
    }
  }
  compile(objects); // warm-up (JIT)
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    compile(objects);
    runs.push(performance.now() - t0);
  }
  const changed = objects.map((o) =>
    o.object.kind === 'GatewayToken' && o.object.metadata?.name === 'token-1' ? { object: { ...o.object, spec: { ...(o.object as any).spec, group: 'group-2' } } } : o,
  );
  const one: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    compile(changed);
    one.push(performance.now() - t0);
  }
  return { full: pct(runs, 50), oneChange: pct(one, 50), objects: objects.length };
}

interface Memory { rssMB: number; heapMB: number; baselineMB: number; coldCompileMs: number; warmCompileMs: number; tokens: number }

async function rss(): Promise<Memory> {
  const root = join(import.meta.dirname, '..');
  await run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: root });
  const api = new FakeApiServer();
  await api.start();
  for (const o of config(10_000, 1_000, 100)) api.apply(o);
  try {
    const child = join(import.meta.dirname, 'config-memory-child.mjs');
    const { stdout } = await run(process.execPath, ['--expose-gc', child, join(root, 'dist'), api.url, NS], { cwd: root });
    return JSON.parse(stdout.trim().split('\n').at(-1)!);
  } finally {
    await api.stop();
  }
}

const latency = await applyToEffective();
const cost = compileCost();
const mem = await rss();
console.log('\nmodel-gateway config benchmark (fake API server on loopback, real @kubernetes/client-node)\n');
console.log(`| measure | value |\n|---|---|`);
console.log(`| apply → effective (routing table), p50 over ${latency.n} changes | ${ms(latency.p50)} |`);
console.log(`| apply → effective (routing table), p99 | ${ms(latency.p99)} |`);
console.log(`| apply → effective, max | ${ms(latency.max)} |`);
console.log(`| compile ${cost.objects} objects (10,000 tokens, 1,000 routes, 100 groups + Secrets), median | ${ms(cost.full)} |`);
console.log(`| compile after a one-object change (full recompile), median | ${ms(cost.oneChange)} |`);
console.log(`| gateway process (dist/) holding that config read from the API server: RSS | ${mem.rssMB.toFixed(0)} MB (before loading: ${mem.baselineMB.toFixed(0)} MB) |`);
console.log(`| … heap used | ${mem.heapMB.toFixed(0)} MB |`);
console.log(`| … first (cold) compile of the ${mem.tokens} tokens etc. | ${ms(mem.coldCompileMs)} |`);
console.log(`| … recompile, as after a one-object change (median of 5) | ${ms(mem.warmCompileMs)} |`);
console.log(`\nnode ${process.version}, ${new Date().toISOString()}`);
