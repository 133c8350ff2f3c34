// The gateway as the chart deploys it, but out of cluster against the real API server: the chart rendered for
// Kubernetes 1.26 (a temporary copy whose only change is a lowered kubeVersion floor), its ServiceAccount and RBAC
// applied, a TokenRequest token for that ServiceAccount in a kubeconfig, and the real executable started with the
// environment the rendered Deployment gives its container (only loopback addresses and file paths swapped).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Agent, fetch } from 'undici';
import { parseAllDocuments, stringify } from 'yaml';
import { CHART_DIR } from '../chart/repo.js';
import { freePort } from '../support/free-port.js';
import { REPO_ROOT, runCli, type CliRun } from '../support/spawn-cli.js';
import { type Envtest, k8sTool } from './envtest.js';

/** A rendered manifest or an object read back (untyped YAML/JSON). */
export type Obj = Record<string, any>;

const RELEASE = 'model-gateway';
const RBAC_KINDS = new Set(['ServiceAccount', 'Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']);

/** A scratch directory for one test file (the chart copy, kubeconfigs, id keys); remove() in afterAll. */
export function scratch(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'mg-envtest-gateway-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The chart rendered for the v1.26 server: a copy whose Chart.yaml floor is lowered, nothing else changed. */
function renderChart(dir: string, namespace: string, values: Obj): Obj[] {
  const chart = join(dir, 'chart');
  if (!existsSync(chart)) {
    cpSync(CHART_DIR, chart, { recursive: true });
    const file = join(chart, 'Chart.yaml');
    const lowered = readFileSync(file, 'utf8').replace(/^kubeVersion: .*$/m, 'kubeVersion: ">=1.26.0-0"');
    if (!lowered.includes('>=1.26.0-0')) throw new Error('no kubeVersion line in Chart.yaml to lower');
    writeFileSync(file, lowered);
  }
  const valuesFile = join(dir, `values-${namespace}.json`);
  writeFileSync(valuesFile, JSON.stringify(values));
  const r = spawnSync(k8sTool('helm'), ['template', RELEASE, chart, '--namespace', namespace, '--kube-version', '1.26.0', '-f', valuesFile], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`helm template failed: ${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Obj | null)
    .filter((d): d is Obj => d !== null);
}

/** Applies manifests as the admin (kubectl apply, strict field validation), failing with kubectl's message. */
export function apply(server: Envtest, objects: Obj[]): void {
  const r = server.kubectl(['apply', '-f', '-'], objects.map((o) => stringify(o)).join('---\n'));
  if (r.status !== 0) throw new Error(`kubectl apply failed: ${r.stderr}`);
}

/**
 * The namespaces a rendered release needs: its own and every watched one (the chart expects them to exist).
 * Created, not applied: on a server that test files share, a namespace that exists holds another file's objects.
 */
function createNamespaces(server: Envtest, names: string[]): void {
  const r = server.kubectl(['create', '-f', '-'], names.map((name) => stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })).join('---\n'));
  if (r.status !== 0) throw new Error(`kubectl create namespace failed: ${r.stderr}`);
}

/** The CRDs of crds/, applied as the admin (a no-op where an earlier file on a shared server applied them). */
export function installCrds(server: Envtest): void {
  const r = server.kubectl(['apply', '-f', join(REPO_ROOT, 'crds')]);
  if (r.status !== 0) throw new Error(`kubectl apply -f crds/ failed: ${r.stderr}`);
}

export interface ChartRelease {
  rendered: Obj[];
  /** The RBAC objects applied (ServiceAccount, Roles, ClusterRoles and their bindings). */
  rbac: Obj[];
  /** A kubeconfig with a token of the release's ServiceAccount. */
  kubeconfig: string;
  leaseName: string;
}

/**
 * The chart's release in `namespace` as a cluster would hold it before the gateway starts: rendered with
 * `values`, its namespace and the `watched` ones created, its ServiceAccount and RBAC applied, then `objects`
 * (the configuration), and a kubeconfig with a token of its ServiceAccount in `dir`.
 */
export function deployChartRelease(
  server: Envtest,
  dir: string,
  namespace: string,
  values: Obj,
  options: { watched?: string[]; objects?: Obj[] } = {},
): ChartRelease {
  const rendered = renderChart(dir, namespace, values);
  createNamespaces(server, [...new Set([namespace, ...(options.watched ?? [])])]);
  const rbac = applyChartRbac(server, rendered);
  if (options.objects?.length) apply(server, options.objects);
  const kubeconfig = join(dir, `kubeconfig-${namespace}`);
  serviceAccountKubeconfig(server, rendered, kubeconfig);
  return { rendered, rbac, kubeconfig, leaseName: deploymentOf(rendered).configMap.data.MG_LEASE_NAME as string };
}

/** The gateway's ServiceAccount and exactly the Roles, ClusterRoles and bindings the chart renders. */
function applyChartRbac(server: Envtest, rendered: Obj[]): Obj[] {
  const rbac = rendered.filter((o) => RBAC_KINDS.has(o.kind));
  apply(server, rbac);
  return rbac;
}

function deploymentOf(rendered: Obj[]): { deployment: Obj; container: Obj; configMap: Obj } {
  const deployment = rendered.find((d) => d.kind === 'Deployment');
  if (!deployment) throw new Error('the chart rendered no Deployment');
  const container = deployment.spec.template.spec.containers[0];
  const configMap = rendered.find((d) => d.kind === 'ConfigMap' && d.metadata.name === container.envFrom[0].configMapRef.name);
  if (!configMap) throw new Error('the chart rendered no ConfigMap for the Deployment');
  return { deployment, container, configMap };
}

/** The audit-log user name of the chart's ServiceAccount. */
export function serviceAccountUser(rendered: Obj[]): string {
  const { deployment } = deploymentOf(rendered);
  return `system:serviceaccount:${deployment.metadata.namespace}:${deployment.spec.template.spec.serviceAccountName}`;
}

/** A kubeconfig holding a TokenRequest token of the Deployment's ServiceAccount, as its pod would mount. */
function serviceAccountKubeconfig(server: Envtest, rendered: Obj[], file: string): void {
  const { deployment } = deploymentOf(rendered);
  const ns = deployment.metadata.namespace as string;
  const token = tokenFor(server, ns, deployment.spec.template.spec.serviceAccountName);
  const ca = readFileSync(join(server.env.ENVTEST_DIR, 'ca.crt')).toString('base64');
  writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'envtest', cluster: { server: server.env.KUBE_APISERVER_URL, 'certificate-authority-data': ca } }],
      users: [{ name: 'gateway', user: { token } }],
      contexts: [{ name: 'gateway', context: { cluster: 'envtest', user: 'gateway', namespace: ns } }],
      'current-context': 'gateway',
    }),
    { mode: 0o600 },
  );
}

/** A TokenRequest token (kubectl create token), as the kubelet would project into the pod. */
function tokenFor(server: Envtest, namespace: string, serviceAccount: string): string {
  const r = server.kubectl(['-n', namespace, 'create', 'token', serviceAccount, '--duration', '1h']);
  if (r.status !== 0) throw new Error(`kubectl create token failed: ${r.stderr}`);
  return r.stdout.trim();
}

export interface ChartGateway {
  readonly run: CliRun;
  readonly podName: string;
  readonly baseURL: string;
  client(apiKey: string): OpenAI;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts the real executable with the pod's environment from the rendered Deployment and ConfigMap; `extraEnv`
 * adds settings the chart leaves at their defaults (shorter timings for tests). Resolves once it is ready.
 */
export async function startChartGateway(
  dir: string,
  rendered: Obj[],
  kubeconfig: string,
  podName: string,
  extraEnv: Record<string, string> = {},
): Promise<ChartGateway> {
  const { deployment, container, configMap } = deploymentOf(rendered);
  const env: Record<string, string> = { ...configMap.data };
  for (const e of container.env as Obj[]) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[e.name] = podName;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') env[e.name] = deployment.metadata.namespace;
    else throw new Error(`unhandled env ${e.name}`);
  }
  // The id-key Secret volume, materialised where the mount would be.
  const keys = join(dir, `id-keys-${podName}`);
  mkdirSync(keys, { recursive: true });
  writeFileSync(join(keys, 'keys'), Buffer.alloc(32, 7).toString('base64'));
  const port = await freePort();
  const run = runCli(['serve', ...((container.args as string[] | undefined) ?? [])], {
    ...env,
    MG_ID_KEYS_FILE: join(keys, 'keys'),
    MG_HOST: '127.0.0.1',
    MG_PORT: String(port),
    MG_METRICS_PORT: String(await freePort()),
    KUBECONFIG: kubeconfig,
    ...extraEnv,
  });
  await run.waitForLog((l) => l.msg === 'first config loaded; ready', 30_000);
  const baseURL = `http://127.0.0.1:${port}/v1`;
  return {
    run,
    podName,
    baseURL,
    client: (apiKey) => new OpenAI({ apiKey, baseURL, maxRetries: 0, timeout: 5_000 }),
    async stop(signal = 'SIGTERM') {
      if (run.child.exitCode === null && run.child.signalCode === null) {
        run.child.kill(signal);
        await run.exited;
      }
    },
  };
}

/** Each namespace's client key differs: one gateway may watch several, and a key digest must be unique. */
export const clientKey = (namespace: string): string => `sk-envtest-${namespace}-client-key`;
const GV = 'modelgateway.io/v1alpha1';
const SECRET_LABEL = { 'modelgateway.io/secret': 'true' };

/**
 * One namespace's configuration: an upstream credential and a client key (labelled Secrets), a ModelRoute to
 * `upstreamBaseURL` (its model named after the namespace: public model names must be unique across the watched
 * namespaces), a Group and a GatewayToken, both with limits (so the leader has a status.usage to write).
 */
export function tenantObjects(namespace: string, upstreamBaseURL: string, model = `envtest-${namespace}`): Obj[] {
  const meta = (name: string, labels?: Record<string, string>) => ({ name, namespace, ...(labels ? { labels } : {}) });
  return [
    { apiVersion: 'v1', kind: 'Secret', metadata: meta('upstream', SECRET_LABEL), stringData: { apiKey: 'sk-upstream-envtest' } },
    { apiVersion: 'v1', kind: 'Secret', metadata: meta('client-key', SECRET_LABEL), stringData: { token: clientKey(namespace) } },
    {
      apiVersion: GV,
      kind: 'ModelRoute',
      metadata: meta(model),
      spec: { model, backends: [{ name: 'fake', baseURL: upstreamBaseURL, apiKeySecretRef: { name: 'upstream', key: 'apiKey' } }] },
    },
    { apiVersion: GV, kind: 'Group', metadata: meta('team'), spec: { models: ['envtest-*'], limits: { requestsPerMinute: 1000, tokensPerDay: 1_000_000 } } },
    {
      apiVersion: GV,
      kind: 'GatewayToken',
      metadata: meta('client'),
      spec: { group: 'team', secretRef: { name: 'client-key', key: 'token' }, limits: { requestsPerMinute: 100, tokensPerDay: 100_000 } },
    },
  ];
}

interface Condition {
  type: string;
  status: string;
  observedGeneration?: number;
}

const dispatchers = new WeakMap<Envtest, Agent>();

/** GET of an API path as the admin (asynchronous: polling must not block the loop a fake upstream runs on). */
export async function adminGet(server: Envtest, path: string): Promise<Obj | undefined> {
  let dispatcher = dispatchers.get(server);
  if (!dispatcher) {
    dispatcher = new Agent({ connect: { ca: readFileSync(join(server.env.ENVTEST_DIR, 'ca.crt')) } });
    dispatchers.set(server, dispatcher);
  }
  const r = await fetch(`${server.env.KUBE_APISERVER_URL}${path}`, {
    dispatcher,
    headers: { authorization: `Bearer ${server.env.ENVTEST_ADMIN_TOKEN}` },
  });
  if (r.status === 404) return undefined;
  if (!r.ok) throw new Error(`GET ${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as Obj;
}

/** A custom resource of modelgateway.io/v1alpha1 (plural, e.g. "groups"), or undefined. */
export function getResource(server: Envtest, plural: string, namespace: string, name: string): Promise<Obj | undefined> {
  return adminGet(server, `/apis/${GV}/namespaces/${namespace}/${plural}/${name}`);
}

/** The Ready condition, if it is True for the object's current generation. */
export function readyAtGeneration(o: Obj | undefined): Condition | undefined {
  const conditions = (o?.status?.conditions ?? []) as Condition[];
  return conditions.find((c) => c.type === 'Ready' && c.status === 'True' && c.observedGeneration === o?.metadata.generation);
}

export async function leaseHolder(server: Envtest, namespace: string, name: string): Promise<string | undefined> {
  const lease = await adminGet(server, `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`);
  return lease?.spec?.holderIdentity as string | undefined;
}
