// The chart declares the oldest Kubernetes it supports (Chart.yaml kubeVersion). A fake API server accepts any field;
// a real one of an older version rejects a field it does not know ("field not declared in schema": preStop `sleep`
// below 1.30 did). So every object rendered for the floor is checked against the Kubernetes API of the floor, and
// every render for a newer version (the other side of a .Capabilities.KubeVersion gate) against that version's.
import { describe, expect, it } from 'vitest';
import { checkAgainstKubernetesTypes, installedTypeVersions, typesFor } from './kube-types.js';
import { chartKubeFloor, compareVersions, kubeVersionRenders, read, readYamlDocuments } from './repo.js';

type Obj = Record<string, any>;

const RENDERED = 'test/chart/rendered';
const FLOOR_RENDERS = ['default', 'namespaces', 'all-namespaces', 'full', 'redis-url', 'in-chart-redis', 'e2e', 'no-leader-election', 'crds'];
const floor = chartKubeFloor();
const docs = (file: string) => readYamlDocuments(file) as Obj[];
/** The --kube-version of the helm command on line 2 of a snapshot. */
const renderedFor = (file: string) => /--kube-version (\S+)/.exec(read(file).split('\n', 3)[1] ?? '')?.[1];

describe(`objects rendered for the chart's floor, Kubernetes ${floor}`, () => {
  const types = typesFor(floor);

  it('both charts declare the same floor, and the snapshots were rendered for it', () => {
    expect(chartKubeFloor('charts/model-gateway-crds')).toBe(floor);
    for (const name of FLOOR_RENDERS) {
      expect(renderedFor(`${RENDERED}/${name}.yaml`), name).toBe(floor);
    }
  });

  it('the types checked against are the newest installed that are not newer than the floor', () => {
    expect(compareVersions(`${types}.0`, floor)).toBeLessThanOrEqual(0);
    expect(installedTypeVersions()).toContain(types);
  });

  it('the check catches a field newer than the floor (the preStop sleep action, Kubernetes 1.30)', () => {
    const deployment = docs(`${RENDERED}/default.yaml`).find((d) => d.kind === 'Deployment')!;
    const withSleep = structuredClone(deployment);
    withSleep.spec.template.spec.containers[0].lifecycle = { preStop: { sleep: { seconds: 5 } } };
    const problems = checkAgainstKubernetesTypes([withSleep], types);
    expect(problems.map((p) => p.message).join('\n')).toMatch(/'"?sleep"?' does not exist in type 'LifecycleHandler'/);
  });

  it.each(FLOOR_RENDERS)('%s: every field is in the Kubernetes API of the floor', (name) => {
    const objects = docs(`${RENDERED}/${name}.yaml`);
    expect(objects.length).toBeGreaterThan(0);
    expect(checkAgainstKubernetesTypes(objects, types)).toEqual([]);
  });
});

describe('renders for newer Kubernetes versions', () => {
  const renders = kubeVersionRenders();

  it('exist on both sides of the preStop gate (1.30)', () => {
    expect(renders.some(([v]) => compareVersions(v, '1.30.0') < 0)).toBe(true);
    expect(renders.some(([v]) => compareVersions(v, '1.30.0') >= 0)).toBe(true);
  });

  it.each(renders)("Kubernetes %s: every field is in that version's API", (version, file) => {
    expect(renderedFor(file)).toBe(version);
    expect(checkAgainstKubernetesTypes(docs(file), typesFor(version))).toEqual([]);
  });
});
