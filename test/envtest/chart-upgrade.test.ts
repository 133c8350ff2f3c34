// `helm install` and `helm upgrade` of charts/model-gateway on a real API server (a lowered-floor copy, as
// charts.test.ts renders): what an upgrade does to the stored Deployment and the id-key Secret. Nothing runs (no
// controllers), so the replica count the server holds is exactly what Helm's patch left.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ChartCopies, chartCopiesForEnvtest } from './charts-for-envtest.js';
import { describeEnvtest, type Envtest, k8sTool, kubectlOk, sharedEnvtest } from './envtest.js';

const NAMESPACE = 'chart-upgrade';
const RELEASE = 'gw';
const DEPLOYMENT = `${RELEASE}-model-gateway`;

describeEnvtest('helm install and upgrade of the gateway chart on a real API server', () => {
  let server: Envtest;
  let charts: ChartCopies;
  beforeAll(() => {
    charts = chartCopiesForEnvtest();
    server = sharedEnvtest();
    kubectlOk(server, ['create', 'namespace', NAMESPACE]);
  }, 120_000);
  afterAll(() => {
    server?.stop();
    charts?.remove();
  });

  const helm = (verb: 'install' | 'upgrade', args: string[]) => {
    const r = spawnSync(k8sTool('helm'), [verb, RELEASE, charts.path('model-gateway'), '--namespace', NAMESPACE, ...args], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, KUBECONFIG: server.env.KUBECONFIG },
    });
    expect(r.status, `helm ${verb} ${args.join(' ')}: ${r.stderr}`).toBe(0);
  };
  const deployment = () => JSON.parse(kubectlOk(server, ['-n', NAMESPACE, 'get', 'deployment', DEPLOYMENT, '-o', 'json']));
  const idKeys = () => kubectlOk(server, ['-n', NAMESPACE, 'get', 'secret', `${DEPLOYMENT}-id-keys`, '-o', 'jsonpath={.data.keys}']);

  it('keeps the generated id key and rolls the pods only when a start-up setting changes', () => {
    helm('install', ['--set', 'replicaCount=3']);
    const key = idKeys();
    const template = deployment().spec.template;
    expect(key.length).toBeGreaterThan(40);
    // Settings the gateway process never reads: the PDB, the in-chart Redis's own memory, the Secret's keep policy.
    helm('upgrade', [
      '--reuse-values',
      '--set',
      'podDisruptionBudget.maxUnavailable=2',
      '--set',
      'redis.inChart.maxmemory=300mb',
      '--set',
      'idKeys.keepOnUninstall=false',
    ]);
    expect(deployment().spec.template).toEqual(template);
    // A setting in the ConfigMap, and a Redis URL, which changes only the content of a Secret of unchanged name.
    helm('upgrade', ['--reuse-values', '--set', 'gateway.logLevel=debug', '--set', 'redis.enabled=true', '--set', 'redis.url=redis://redis:6379/0']);
    const annotations = deployment().spec.template.metadata.annotations;
    for (const k of ['checksum/config', 'checksum/redis']) expect(annotations[k], k).not.toBe(template.metadata.annotations[k]);
    expect(idKeys()).toBe(key);
  });

  it('turning autoscaling on keeps the replica count until the HPA changes it, instead of dropping to 1', () => {
    expect(deployment().spec.replicas).toBe(3);
    helm('upgrade', ['--reuse-values', '--set', 'autoscaling.enabled=true', '--set', 'autoscaling.minReplicas=2']);
    expect(deployment().spec.replicas).toBe(3);
    // The HPA scales; a later upgrade leaves its count alone.
    kubectlOk(server, ['-n', NAMESPACE, 'scale', 'deployment', DEPLOYMENT, '--replicas=5']);
    helm('upgrade', ['--reuse-values', '--set', 'gateway.logLevel=info']);
    expect(deployment().spec.replicas).toBe(5);
  });
});
