// Paths and readers shared by the chart, image and script tests.
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const CHART_DIR = join(ROOT, 'charts', 'model-gateway');
export const CRD_CHART_DIR = join(ROOT, 'charts', 'model-gateway-crds');

export function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/** Parses one YAML document strictly: duplicate keys and syntax errors throw. */
export function readYaml<T = unknown>(path: string): T {
  return parse(read(path), { uniqueKeys: true, prettyErrors: true }) as T;
}

/** Every document of a multi-document YAML file; throws on the first error in any of them. */
export function readYamlDocuments(path: string): unknown[] {
  const docs = parseAllDocuments(read(path), { uniqueKeys: true, prettyErrors: true });
  const list = Array.isArray(docs) ? docs : [docs];
  for (const doc of list) if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors[0]!.message}`);
  return list.map((d) => d.toJS()).filter((d) => d !== null && d !== undefined);
}

/** Files under dir (repository-relative), recursively, skipping dependency and build folders. */
export function listFiles(dir = '.', skip = new Set(['node_modules', '.git', 'dist', 'coverage'])): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    if (skip.has(entry.name)) continue;
    const rel = dir === '.' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...listFiles(rel, skip));
    else if (entry.isFile()) out.push(rel);
  }
  return out.sort();
}

/** The oldest Kubernetes version charts/model-gateway declares (Chart.yaml kubeVersion ">=X.Y.Z…"), as "X.Y.Z". */
export function chartKubeFloor(chartDir = 'charts/model-gateway'): string {
  const range = readYaml<{ kubeVersion?: string }>(`${chartDir}/Chart.yaml`).kubeVersion ?? '';
  const floor = /^>=\s*v?(\d+\.\d+\.\d+)/.exec(range)?.[1];
  if (!floor) throw new Error(`${chartDir}/Chart.yaml: kubeVersion ${JSON.stringify(range)} has no ">=X.Y.Z" floor`);
  return floor;
}

/** "1.30.2-eks-1234" or "v1.30.2" → [1, 30, 2]. */
function kubeVersionParts(version: string): [number, number, number] {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) throw new Error(`not a Kubernetes version: ${version}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

/** The snapshots scripts/render-chart.sh writes for ci/full-values.yaml per Kubernetes version: [version, file]. */
export function kubeVersionRenders(): [string, string][] {
  return readdirSync(join(ROOT, 'test/chart/rendered'))
    .flatMap((f) => {
      const m = /^full\.kube-(.+)\.yaml$/.exec(f);
      return m ? [[m[1]!, `test/chart/rendered/${f}`] as [string, string]] : [];
    })
    .sort(([a], [b]) => compareVersions(a, b));
}

export function compareVersions(a: string, b: string): number {
  const [x, y] = [kubeVersionParts(a), kubeVersionParts(b)];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}
