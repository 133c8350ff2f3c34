// Both charts rendered by helm for a real kube-apiserver v1.26 (with the defaults and every ci/*-values.yaml): every
// rendered object passes the server's validation with strict field validation, client-side and server-side (server
// dry run: nothing is stored, so the scenarios share one server). The ServiceMonitor is checked only for its kind
// and metadata: its CRD here is a stand-in that keeps any spec (prometheus-operator's schema is not in this repo).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ChartCopies, chartCopiesForEnvtest, ENVTEST_KUBE_VERSION, objectsOf, repoRoot } from './charts-for-envtest.js';
import { describeEnvtest, type Envtest, startEnvtest } from './envtest.js';

const NAMESPACE = 'model-gateway';
const CI_VALUES = readdirSync(join(repoRoot, 'charts/model-gateway/ci'))
  .filter((f) => f.endsWith('-values.yaml'))
  .sort();

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

  const ok = (args: string[], input?: string) => {
    const r = server.kubectl(args, input);
    expect(r.status, `kubectl ${args.join(' ')}: ${r.stderr}`).toBe(0);
    expect(r.stderr, `kubectl ${args.join(' ')} warned`).not.toMatch(/Warning/i);
    return r.stdout;
  };

  /** Every object of a rendered stream is accepted by a server dry run, client-side and server-side, strictly. */
  const passesDryRuns = (rendered: string) => {
    const objects = objectsOf(rendered);
    expect(objects.length).toBeGreaterThan(0);
    const clientSide = ok(['apply', '--dry-run=server', '--validate=strict', '-o', 'name', '-f', '-'], rendered);
    const serverSide = ok(['apply', '--server-side', '--dry-run=server', '--validate=strict', '-o', 'name', '-f', '-'], rendered);
    for (const out of [clientSide, serverSide]) {
      const names = out.trim().split('\n');
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
    passesDryRuns(rendered);
  });

  it.each([['(the defaults, no values file)'], ...CI_VALUES.map((f) => [f])])('charts/model-gateway with %s: every object passes the dry runs', (values) => {
    const args = ['--namespace', NAMESPACE, ...(values.endsWith('.yaml') ? ['-f', join(repoRoot, 'charts/model-gateway/ci', values)] : [])];
    const rendered = charts.template('model-gateway', args);
    const objects = objectsOf(rendered);
    // Objects need their namespace, and the ServiceMonitor its CRD, before the server will look at them.
    const namespaces = [...new Set([NAMESPACE, ...objects.flatMap((o) => (o.namespace ? [o.namespace] : []))])];
    const existing = ok(['get', 'namespaces', '-o', 'name']);
    for (const ns of namespaces) if (!existing.includes(`namespace/${ns}\n`)) ok(['create', 'namespace', ns]);
    if (objects.some((o) => o.kind === 'ServiceMonitor') && server.kubectl(['get', 'crd', SERVICE_MONITOR_CRD.metadata.name]).status !== 0) {
      ok(['apply', '-f', '-'], JSON.stringify(SERVICE_MONITOR_CRD));
      ok(['wait', '--for=condition=Established', '--timeout=30s', `crd/${SERVICE_MONITOR_CRD.metadata.name}`]);
    }
    passesDryRuns(rendered);
  });
});
