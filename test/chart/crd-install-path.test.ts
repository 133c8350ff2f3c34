// The CRDs have one documented way in: their chart, model-gateway-crds. Following two documented sections once meant
// `kubectl apply -f crds/` and then `helm upgrade --install model-gateway-crds`, which Helm refuses ("invalid
// ownership metadata": it takes over only objects carrying its release's annotations and managed-by label). These
// checks keep the documentation (README and docs/) and NOTES.txt on that one path (same release, chart and namespace
// everywhere) and keep the adoption recipe for kubectl-applied CRDs exact: the metadata Helm's ownership check reads, on exactly
// the CRDs the chart renders.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { read, readYaml, readYamlDocuments, ROOT } from './repo.js';

type Obj = Record<string, any>;

const CRD_CHART = 'charts/model-gateway-crds';
const kubernetesPage = read('docs/kubernetes.md');
const helmPage = read('docs/helm.md');
const readme = [read('README.md'), kubernetesPage, helmPage, read('docs/testing.md')].join('\n');
/** Every ```sh block of the documentation, as text. */
const shellBlocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
const renderedCrds = readYamlDocuments('test/chart/rendered/crds.yaml') as Obj[];

interface HelmInstall {
  readonly release: string;
  readonly chart: string;
  readonly namespace: string | undefined;
}

/** Every `helm upgrade [--install] RELEASE charts/model-gateway-crds …` in `text` (one line each). */
function crdChartCommands(text: string): HelmInstall[] {
  return [...text.matchAll(/helm upgrade (?:--install )?(\S+) (charts\/model-gateway-crds)\b([^\n`]*)/g)].map((m) => ({
    release: m[1]!,
    chart: m[2]!,
    namespace: /--namespace[ =](\S+)/.exec(m[3]!)?.[1],
  }));
}

describe('the CRDs are installed one way: the model-gateway-crds chart', () => {
  const chartName = readYaml<{ name: string }>(`${CRD_CHART}/Chart.yaml`).name;
  const readmeCommands = crdChartCommands(readme);
  const notes = read('test/chart/rendered/default.notes.txt');
  const notesCommands = crdChartCommands(notes);

  it('no documented command applies crds/ with kubectl (only a server-side dry run checks them)', () => {
    const applies = shellBlocks.flatMap((b) => b.split('\n')).filter((l) => /kubectl apply\b.*-f\s+crds\/?(\s|$)/.test(l));
    expect(applies.filter((l) => !/--dry-run/.test(l))).toEqual([]);
  });

  it('the documentation and NOTES.txt name the same release of the same chart in the same namespace', () => {
    expect(readmeCommands.length).toBeGreaterThanOrEqual(3); // Kubernetes section, Helm section, adoption recipe
    expect(notesCommands).toHaveLength(1); // the warning shown while the CRDs are missing
    for (const c of [...readmeCommands, ...notesCommands]) {
      expect(c).toEqual({ release: chartName, chart: CRD_CHART, namespace: 'model-gateway' });
      expect(existsSync(join(ROOT, c.chart, 'Chart.yaml'))).toBe(true);
    }
  });

  it('the Kubernetes and Helm pages both install the CRDs with the chart', () => {
    for (const [name, page] of [
      ['kubernetes', kubernetesPage],
      ['helm', helmPage],
    ] as const) {
      expect(crdChartCommands(page).length, name).toBeGreaterThan(0);
    }
  });
});

describe('adopting CRDs applied earlier with kubectl', () => {
  const recipe = shellBlocks.find((b) => b.includes('kubectl annotate crd'));
  const install = crdChartCommands(readme)[0]!;

  it('the documentation has the recipe, ending with the chart install', () => {
    expect(recipe).toBeDefined();
    expect(crdChartCommands(recipe!).at(-1)).toEqual(install);
  });

  it('it adopts exactly the CRDs the chart renders', () => {
    const listed = /for crd in ([^;]+);/.exec(recipe!)?.[1]?.trim().split(/\s+/);
    expect(listed?.sort()).toEqual(renderedCrds.map((c) => c.metadata.name).sort());
  });

  it("it sets the metadata Helm's ownership check compares with the release", () => {
    expect(recipe).toContain(`meta.helm.sh/release-name=${install.release}`);
    expect(recipe).toContain(`meta.helm.sh/release-namespace=${install.namespace}`);
    expect(recipe).toMatch(/kubectl label crd \S+ --overwrite app\.kubernetes\.io\/managed-by=Helm/);
    expect(recipe).toMatch(/kubectl annotate crd \S+ --overwrite /);
  });

  it('the chart leaves that metadata to Helm (a rendered value would contradict the release Helm writes)', () => {
    expect(renderedCrds.length).toBeGreaterThan(0);
    for (const crd of renderedCrds) {
      expect(Object.keys(crd.metadata.annotations ?? {}).filter((k) => k.startsWith('meta.helm.sh/'))).toEqual([]);
      expect(crd.metadata.labels?.['app.kubernetes.io/managed-by'] ?? 'Helm').toBe('Helm');
      expect(crd.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
    }
  });
});
