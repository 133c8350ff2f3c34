// helm, as scripts/k8s-tools.sh provides it (unpacked once from an npm package), for tests that ask the chart itself
// whether it takes a value: the schema check is helm's own (its JSON Schema validator and RE2 patterns), not ajv's.
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CHART_DIR, ROOT } from './repo.js';

let helmPath: string | undefined;

function helm(): string {
  if (helmPath) return helmPath;
  const r = spawnSync('bash', [join(ROOT, 'scripts/k8s-tools.sh'), 'helm'], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`scripts/k8s-tools.sh helm failed: ${r.stderr}`);
  helmPath = r.stdout.trim();
  return helmPath;
}

export type Rendered = { ok: true; objects: Record<string, any>[] } | { ok: false; error: string };

/** `helm template` of charts/model-gateway with these arguments (e.g. ['--set-string', 'a=b']). */
export function renderChart(args: readonly string[]): Promise<Rendered> {
  return new Promise((resolve, reject) => {
    const child = spawn(helm(), ['template', 'model-gateway', CHART_DIR, '--namespace', 'model-gateway', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return resolve({ ok: false, error: Buffer.concat(err).toString() });
      const objects = parseAllDocuments(Buffer.concat(out).toString()).map((d) => d.toJS());
      resolve({ ok: true, objects: objects.filter((o) => o !== null) });
    });
  });
}

/** The rendered ConfigMap's data: the gateway's MG_* settings. */
export function configData(objects: Record<string, any>[]): Record<string, string> {
  return objects.find((o) => o.kind === 'ConfigMap' && o.data?.MG_SOURCE)!.data;
}
/** The gateway container's env list as name → value (valueFrom entries left out). */
export function containerEnv(objects: Record<string, any>[]): Record<string, string> {
  const deployment = objects.find((o) => o.kind === 'Deployment')!;
  const env: { name: string; value?: string }[] = deployment.spec.template.spec.containers[0].env ?? [];
  return Object.fromEntries(env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
}
