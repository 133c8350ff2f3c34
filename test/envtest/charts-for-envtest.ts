// The charts rendered by helm for the real API server's version. The charts declare a kubeVersion floor above the
// envtest's v1.26, so helm renders a temporary copy of each whose only change is that floor, lowered to 1.26.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { k8sTool } from './envtest.js';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const ENVTEST_KUBE_VERSION = '1.26.0';

export interface ChartCopies {
  /** `helm template` of charts/<chart> for ENVTEST_KUBE_VERSION as release `release` (default: the chart's name). */
  template(chart: 'model-gateway' | 'model-gateway-crds', args?: string[], release?: string): string;
  /** The directory of the lowered copy of charts/<chart>, for helm install and upgrade. */
  path(chart: 'model-gateway' | 'model-gateway-crds'): string;
  remove(): void;
}

export function chartCopiesForEnvtest(): ChartCopies {
  const dir = mkdtempSync(join(tmpdir(), 'mg-charts-'));
  for (const chart of ['model-gateway', 'model-gateway-crds']) {
    cpSync(join(repoRoot, 'charts', chart), join(dir, chart), { recursive: true });
    const file = join(dir, chart, 'Chart.yaml');
    const original = readFileSync(file, 'utf8');
    const lowered = original.replace(/^kubeVersion: .*$/m, `kubeVersion: ">=${ENVTEST_KUBE_VERSION}-0"`);
    if (lowered === original) throw new Error(`charts/${chart}/Chart.yaml has no kubeVersion line to lower`);
    writeFileSync(file, lowered);
  }
  const helm = k8sTool('helm');
  return {
    template: (chart, args = [], release = chart) => {
      const r = spawnSync(helm, ['template', release, join(dir, chart), '--kube-version', ENVTEST_KUBE_VERSION, ...args], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      if (r.status !== 0) throw new Error(`helm template ${chart} ${args.join(' ')} failed: ${r.stderr}`);
      return r.stdout;
    },
    path: (chart) => join(dir, chart),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

interface ObjectRef {
  kind: string;
  name: string;
  namespace?: string;
}

/** The objects of a multi-document YAML stream (empty documents skipped). */
export function objectsOf(yamlText: string): ObjectRef[] {
  return parseAllDocuments(yamlText)
    .map((d) => d.toJS() as { kind?: string; metadata?: { name?: string; namespace?: string } } | null)
    .filter((o) => o?.kind)
    .map((o) => ({ kind: o!.kind!, name: o!.metadata?.name ?? '', namespace: o!.metadata?.namespace }));
}
