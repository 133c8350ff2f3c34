// The closest this machine gets to test/e2e/kind.sh: the real gateway executable, started with exactly the
// environment the chart renders for ci/e2e-values.yaml (the values kind.sh installs), watching the fake API server
// (test/fake-apiserver: the real Kubernetes wire protocol) loaded with examples/kubernetes/ and the smoke fixtures.
// Then: every custom resource gets Ready from the elected leader, the unchanged SDK smoke test passes (its
// `kubectl patch` sent as a merge patch to the API server), and every API request the gateway made is allowed by
// the Roles the chart renders, in the namespace it was made in, Lease names included.
// Only the loopback addresses differ from a pod (host, ports, kubeconfig, the id-key mount path).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAllowed, type PolicyRule } from '../../src/sources/kubernetes/kubernetes-rbac.js';
import { waitUntil } from '../support/wait.js';
import { kubeConfigYaml } from '../fake-apiserver/kubeconfig.js';
import { FakeApiServer, RESOURCE_TYPES, type RecordedRequest } from '../fake-apiserver/server.js';
import type { KubeObj } from '../fake-apiserver/store.js';
import { readYaml, readYamlDocuments } from '../chart/repo.js';
import { freePort } from '../support/free-port.js';
import { REPO_ROOT, runCli, type CliRun } from '../support/spawn-cli.js';
import { SMOKE } from './smoke-fixture.js';

type Obj = Record<string, any>;
const GATEWAY_TOKEN = 'fake-service-account-token'; // the kubeconfig's user; fake-kubectl uses another
const POD_NAME = 'model-gateway-7d9f8b6c5-x2k4p';
const CR_KINDS = ['ModelRoute', 'Group', 'GatewayToken'] as const;

const rendered = readYamlDocuments('test/chart/rendered/e2e.yaml') as Obj[];
const deployment = rendered.find((d) => d.kind === 'Deployment')!;
const container = deployment.spec.template.spec.containers[0];
const configMap = rendered.find((d) => d.kind === 'ConfigMap' && d.metadata.name === container.envFrom[0].configMapRef.name)!;
const objects = ['examples/kubernetes', 'test/e2e/manifests'].flatMap((dir) =>
  readdirSync(join(REPO_ROOT, dir))
    .filter((f) => /\.ya?ml$/.test(f))
    .flatMap((f) => readYamlDocuments(`${dir}/${f}`) as Obj[]),
);
const customResources = objects.filter((o) => (CR_KINDS as readonly string[]).includes(o.kind));

const dir = mkdtempSync(join(tmpdir(), 'mg-chart-fake-cluster-'));
const api = new FakeApiServer();
let gateway: CliRun;
let apiURL: string;
let metricsURL: string;

/** The pod's environment from the rendered manifests; only loopback endpoints and file paths are swapped. */
function podEnvironment(ports: { api: number; metrics: number }): Record<string, string> {
  const env: Record<string, string> = { ...configMap.data };
  for (const e of container.env as Obj[]) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[e.name] = POD_NAME;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') env[e.name] = deployment.metadata.namespace;
    else throw new Error(`unhandled env ${e.name}`);
  }
  // The id-key Secret volume, materialised where the mount would be.
  const mount = container.volumeMounts.find((m: Obj) => env.MG_ID_KEYS_FILE!.startsWith(`${m.mountPath}/`));
  mkdirSync(join(dir, 'id-keys'));
  writeFileSync(join(dir, 'id-keys', 'keys'), Buffer.alloc(32, 9).toString('base64'));
  env.MG_ID_KEYS_FILE = join(dir, 'id-keys', env.MG_ID_KEYS_FILE!.slice(mount.mountPath.length + 1));
  writeFileSync(join(dir, 'kubeconfig'), kubeConfigYaml(api.url, deployment.metadata.namespace));
  return {
    ...env,
    MG_HOST: '127.0.0.1',
    MG_PORT: String(ports.api),
    MG_METRICS_PORT: String(ports.metrics),
    KUBECONFIG: join(dir, 'kubeconfig'),
  };
}

beforeAll(async () => {
  await api.start();
  for (const o of objects) if (o.kind in RESOURCE_TYPES) api.apply(o as KubeObj);
  gateway = runCli(['serve'], podEnvironment({ api: await freePort(), metrics: await freePort() }));
  const listening = await gateway.waitForLog((l) => l.msg === 'model-gateway listening', 30_000);
  apiURL = listening.api as string;
  metricsURL = listening.metrics as string;
  await gateway.waitForLog((l) => l.msg === 'first config loaded; ready', 30_000);
}, 60_000);

afterAll(async () => {
  if (gateway?.child.exitCode === null) {
    gateway.child.kill('SIGTERM');
    await gateway.exited;
  }
  await api.stop();
  rmSync(dir, { recursive: true, force: true });
});

const ready = (o: KubeObj | undefined) =>
  (o?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

// Steps of one story, each building on the last: they run in this order even under --sequence.shuffle.
describe('the chart-configured gateway on the fake API server', { shuffle: false }, () => {
  it('the fixtures hold every kind, in the namespaces ci/e2e-values.yaml watches', () => {
    expect(new Set(customResources.map((o) => o.kind))).toEqual(new Set(CR_KINDS));
    const namespaces = [...new Set(customResources.map((o) => o.metadata.namespace as string))].sort();
    expect(readYaml<Obj>('charts/model-gateway/ci/e2e-values.yaml').gateway.watchNamespaces.slice().sort()).toEqual(namespaces);
    expect(configMap.data.MG_NAMESPACES.split(',').sort()).toEqual(namespaces);
  });

  it('every ModelRoute, Group and GatewayToken becomes Ready (kind.sh waits for this)', { timeout: 30_000 }, async () => {
    await waitUntil(() => customResources.every((o) => ready(api.get(o.kind, o.metadata.namespace, o.metadata.name))), 25_000);
    const lease = api.get('Lease', deployment.metadata.namespace, configMap.data.MG_LEASE_NAME);
    expect((lease?.spec as Obj | undefined)?.holderIdentity).toBe(POD_NAME);
  });

  it('the SDK smoke test passes, its kubectl patch going through the API server', { timeout: 90_000 }, async () => {
    const smoke = spawn(process.execPath, ['--import', 'tsx', 'test/e2e/smoke.ts'], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        MG_E2E_BASE_URL: `${apiURL}/v1`,
        MG_E2E_NAMESPACE: SMOKE.namespace,
        KUBECTL: `${process.execPath} test/e2e/fake-kubectl.ts`,
        MG_FAKE_KUBECTL_SERVER: api.url,
        MG_E2E_PROPAGATION_TIMEOUT_MS: '20000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    smoke.stdout.on('data', (d) => (out += d));
    smoke.stderr.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((resolve) => smoke.on('close', resolve));
    expect(out, out).toContain('smoke: all 8 steps passed');
    expect(code).toBe(0);
    expect(api.requests.filter((r) => r.user === 'fake-kubectl-user' && r.verb === 'patch').length).toBe(2);
  });

  it('/metrics answers on the metrics port only', async () => {
    expect((await fetch(metricsURL)).status).toBe(200);
    expect((await fetch(`${apiURL}/metrics`)).status).toBe(404);
  });

  it('every API request the gateway made is allowed by the RBAC the chart renders', () => {
    const sa = container && deployment.spec.template.spec.serviceAccountName;
    const bindings = rendered.filter((d) => /^(Cluster)?RoleBinding$/.test(d.kind) && d.subjects.some((s: Obj) => s.name === sa));
    /** The rules bound to the service account that apply in `namespace` (cluster-wide ones everywhere). */
    const rulesIn = (namespace: string | undefined): (PolicyRule & { resourceNames?: string[] })[] =>
      bindings
        .filter((b) => b.kind === 'ClusterRoleBinding' || b.metadata.namespace === namespace)
        .flatMap((b) =>
          rendered.filter(
            (r) => r.kind === b.roleRef.kind && r.metadata.name === b.roleRef.name && (r.kind === 'ClusterRole' || r.metadata.namespace === namespace),
          ),
        )
        .flatMap((r) => r.rules);
    const made = api.requests.filter((r) => r.user === GATEWAY_TOKEN);
    expect(new Set(made.map((r) => r.resource))).toEqual(new Set(['modelroutes', 'groups', 'gatewaytokens', 'secrets', 'leases']));
    expect(made.some((r) => r.subresource === 'status' && r.verb === 'patch')).toBe(true);
    const denied = made.filter((r: RecordedRequest) => {
      const rules = rulesIn(r.namespace).filter((rule) => !rule.resourceNames || (r.name !== undefined && rule.resourceNames.includes(r.name)));
      return !isAllowed(rules, r);
    });
    expect(denied.map((r) => `${r.verb} ${r.path}`)).toEqual([]);
    // And the Secrets were only ever listed and watched with the selector, never read one by one.
    for (const r of made.filter((x) => x.resource === 'secrets')) {
      expect(['list', 'watch']).toContain(r.verb);
      expect(r.labelSelector).toBe(configMap.data.MG_SECRET_SELECTOR);
    }
  });
});
