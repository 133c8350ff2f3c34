// Both charts rendered by helm for a real kube-apiserver v1.26 (with the defaults and every ci/*-values.yaml): every
// rendered object passes the server's validation with strict field validation, client-side and server-side (server
// dry run: nothing is stored, so the scenarios share one server; a server of its own, not a shared one, where
// the CRDs installed client-side would turn the CRD chart's create into an update
// that warns); one more release has Helm's longest name, and every pod template is admitted as a Pod where the
// 'restricted' Pod Security Standard is enforced. The ServiceMonitor is checked only for its kind
// and metadata: its CRD here is a stand-in that keeps any spec (prometheus-operator's schema is not in this repo).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type ChartCopies, chartCopiesForEnvtest, ENVTEST_KUBE_VERSION, objectsOf, repoRoot } from './charts-for-envtest.js';
import { describeEnvtest, type Envtest, startEnvtest, kubectlOk } from './envtest.js';

const NAMESPACE = 'model-gateway';
const RESTRICTED = 'restricted-pods';
type Obj = Record<string, any>;
const CI_VALUES = readdirSync(join(repoRoot, 'charts/model-gateway/ci'))
  .filter((f) => f.endsWith('-values.yaml'))
  .sort();

/**
 * Helm's longest release name (53 characters), without the chart's name in it: the full name is then cut to 63, and
 * every name built on it must still be valid (a Service name has at most 63 characters).
 */
const LONG_RELEASE = 'platform-gateway-production-europe-west-primary-00001';

const SERVICE_MONITOR_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'servicemonitors.monitoring.coreos.com' },
  spec: {
    group: 'monitoring.coreos.com',
    scope: 'Namespaced',
    names: { kind: 'ServiceMonitor', listKind: 'ServiceMonitorList', plural: 'servicemonitors', singular: 'servicemonitor' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
      },
    ],
  },
};

describeEnvtest('the charts on a real kube-apiserver', () => {
  let server: Envtest;
  let charts: ChartCopies;
  beforeAll(() => {
    charts = chartCopiesForEnvtest();
    server = startEnvtest();
  }, 120_000);
  afterAll(() => {
    server?.stop();
    charts?.remove();
  });

  const ok = (args: string[], input?: string) => kubectlOk(server, args, input);

  const dryRun = (mode: string[], rendered: string) =>
    server.kubectl(['apply', ...mode, '--dry-run=server', '--validate=strict', '-o', 'name', '-f', '-'], rendered);

  /**
   * Every object of every rendered scenario is accepted by a server dry run, client-side and server-side, strictly:
   * one kubectl call per mode for all of them; when one fails, the scenarios it refuses are found and named.
   */
  const passDryRuns = (scenarios: Record<string, string>) => {
    const rendered = Object.values(scenarios).join('\n---\n');
    const objects = objectsOf(rendered);
    expect(objects.length).toBeGreaterThan(0);
    // Each object once, so that what kubectl reports names one object of one scenario.
    const ids = objects.map((o) => `${o.kind}/${o.namespace ?? ''}/${o.name}`);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    for (const mode of [[], ['--server-side']]) {
      const r = dryRun(mode, rendered);
      if (r.status !== 0) {
        const refused = Object.keys(scenarios).filter((name) => dryRun(mode, scenarios[name]!).status !== 0);
        expect.fail(`the ${mode.length ? 'server' : 'client'}-side dry run refused scenario(s) ${refused.join(', ')}: ${r.stderr}`);
      }
      expect(r.stderr, 'kubectl warned').not.toMatch(/Warning/i);
      const names = r.stdout.trim().split('\n');
      expect(names).toHaveLength(objects.length);
      for (const o of objects)
        expect(
          names.some((n) => n.endsWith(`/${o.name}`) && n.toLowerCase().startsWith(o.kind.toLowerCase())),
          `${o.kind}/${o.name}`,
        ).toBe(true);
    }
  };

  it(`talks to a v${ENVTEST_KUBE_VERSION} server`, () => {
    // Not through ok(): kubectl warns that it is more than one minor version newer than this server.
    const r = server.kubectl(['version', '-o', 'json']);
    expect(r.status, r.stderr).toBe(0);
    const version = JSON.parse(r.stdout).serverVersion;
    expect(`${version.major}.${version.minor}.0`).toBe(ENVTEST_KUBE_VERSION);
  });

  it('the CRD chart: every CRD passes the dry runs', () => {
    const rendered = charts.template('model-gateway-crds');
    expect(objectsOf(rendered).map((o) => o.kind)).toEqual(['CustomResourceDefinition', 'CustomResourceDefinition', 'CustomResourceDefinition']);
    passDryRuns({ 'model-gateway-crds': rendered });
  });

  /**
   * The defaults and each ci/*-values.yaml, one release per scenario, named for it: release → rendered stream.
   * Rendered once for the file (nine helm runs), for the two tests that read it.
   */
  let scenarioStreams: Record<string, string> | undefined;
  const renderScenarios = (): Record<string, string> => {
    if (scenarioStreams) return scenarioStreams;
    const scenarios: [string, string[]][] = [
      ['defaults', []],
      ...CI_VALUES.map((f): [string, string[]] => [f.replace(/-values\.yaml$/, ''), ['-f', join(repoRoot, 'charts/model-gateway/ci', f)]]),
      // The release with the most names derived from the full name (the in-chart Redis adds a Deployment and Service).
      [LONG_RELEASE, ['-f', join(repoRoot, 'charts/model-gateway/ci/in-chart-redis-values.yaml')]],
    ];
    scenarioStreams = Object.fromEntries(
      scenarios.map(([release, args]) => [release, charts.template('model-gateway', ['--namespace', NAMESPACE, ...args], release)]),
    );
    return scenarioStreams;
  };

  it('charts/model-gateway with the defaults and with each ci/*-values.yaml: every object passes the dry runs', () => {
    // All scenarios in one stream: two kubectl calls check them all.
    const rendered = renderScenarios();
    const objects = objectsOf(Object.values(rendered).join('\n---\n'));
    for (const release of Object.keys(rendered))
      expect(
        objects.some((o) => o.name.startsWith(`${release}-`.slice(0, 40))),
        release,
      ).toBe(true);
    // Objects need their namespace, and the ServiceMonitor its CRD, before the server will look at them.
    const namespaces = [...new Set([NAMESPACE, ...objects.flatMap((o) => (o.namespace ? [o.namespace] : []))])];
    expect(objects.some((o) => o.kind === 'ServiceMonitor')).toBe(true);
    const namespaceObjects = namespaces.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }));
    ok(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [...namespaceObjects, SERVICE_MONITOR_CRD] }));
    ok(['wait', '--for=condition=Established', '--timeout=30s', `crd/${SERVICE_MONITOR_CRD.metadata.name}`]);
    passDryRuns(rendered);
  });

  it("every pod template (gateway and in-chart Redis) is admitted as a Pod where the 'restricted' Pod Security Standard is enforced", () => {
    // The API server's PodSecurity admission judges Pods, not Deployments: each template becomes a Pod, dry-run.
    const pods = Object.values(renderScenarios())
      .flatMap((stream) => parseAllDocuments(stream).map((d) => d.toJS() as Obj | null))
      .filter((o): o is Obj => o?.kind === 'Deployment')
      .map((d) => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: d.metadata.name, namespace: RESTRICTED, labels: d.spec.template.metadata.labels },
        spec: d.spec.template.spec,
      }));
    expect(pods.some((p) => p.metadata.labels['app.kubernetes.io/component'] === 'redis')).toBe(true);
    const restricted = { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' };
    // The PriorityClass ci/full-values.yaml names: Priority admission refuses a Pod naming one that does not exist.
    const priorityClass = { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'high-priority' }, value: 1000 };
    ok(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: RESTRICTED, labels: restricted } }, priorityClass],
      }),
    );
    const r = server.kubectl(['create', '--dry-run=server', '-o', 'name', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: pods }));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(pods.length);
    // The check bites: a bare container is refused there.
    const bare = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bare', namespace: RESTRICTED }, spec: { containers: [{ name: 'c', image: 'x' }] } };
    expect(server.kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(bare)).stderr).toMatch(/violates PodSecurity "restricted/);
  });
});
