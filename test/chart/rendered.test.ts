// Checks real `helm template` output. CI has no helm, so `npm run render:chart` (helm lint --strict + helm template
// for each charts/model-gateway/ci/*-values.yaml) writes the output to test/chart/rendered/, and the first test
// here fails when a snapshot is older than the chart, so these checks can never run against stale output.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { detectResources, envDetector } from '@opentelemetry/resources';
import { describe, expect, it } from 'vitest';
import { chartInputsHash, SNAPSHOT_HEADER } from '../../scripts/chart-inputs.js';
import { REQUIRED_RULES } from '../../src/sources/kubernetes/kubernetes-rbac.js';
import { chartKubeFloor, compareVersions, kubeVersionRenders, read, readYaml, readYamlDocuments, ROOT } from './repo.js';

type Obj = Record<string, any>;
interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

const RENDERED = 'test/chart/rendered';
const RELEASE_NS = 'model-gateway';
const SNAPSHOTS = ['default', 'namespaces', 'all-namespaces', 'full', 'redis-url', 'in-chart-redis', 'e2e', 'no-leader-election'];
/** Every environment variable the gateway's serve contract defines (BRIEF), plus the downward-API pair. */
const CONTRACT_ENV = [
  'MG_CONFIG_DIR',
  'MG_SOURCE',
  'MG_NAMESPACES',
  'MG_SECRET_SELECTOR',
  'KUBECONFIG',
  'MG_HOST',
  'MG_PORT',
  'MG_METRICS_PORT',
  'MG_LOG_LEVEL',
  'MG_DRAIN_TIMEOUT',
  'MG_MAX_JSON_BODY',
  'MG_MAX_UPLOAD_BODY',
  'MG_LEADER_ELECTION',
  'MG_LEASE_NAME',
  'MG_ID_KEYS',
  'MG_ID_KEYS_FILE',
  'MG_WORKERS',
  'MG_REDIS_URL',
  'MG_RESPONSES_REDIS_URL',
  'MG_USAGE_METRICS_PER_TOKEN',
  'MG_TRACE_CONTENT',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_RESOURCE_ATTRIBUTES',
  'POD_NAME',
  'POD_NAMESPACE',
];
const ALWAYS_SET = [
  'MG_SOURCE',
  'MG_NAMESPACES',
  'MG_SECRET_SELECTOR',
  'MG_HOST',
  'MG_PORT',
  'MG_METRICS_PORT',
  'MG_LOG_LEVEL',
  'MG_DRAIN_TIMEOUT',
  'MG_LEADER_ELECTION',
  'MG_LEASE_NAME',
  'MG_WORKERS',
  'MG_USAGE_METRICS_PER_TOKEN',
  'MG_ID_KEYS_FILE',
  'POD_NAME',
  'POD_NAMESPACE',
];
const ruleFile = readYaml<{ watched: Rule[] }>('charts/model-gateway/files/rbac-rules.yaml');

/** The program of the image's exec-form ENTRYPOINT (Dockerfile): node, the only program in the distroless image. */
const IMAGE_NODE = (JSON.parse(/^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(read('Dockerfile'))![1]!) as string[])[0]!;

/**
 * Seconds the container's preStop hook waits: the native sleep action, or (below Kubernetes 1.30, which rejects it)
 * an exec of the image's node running a timer. Anything else in a preStop hook is a test failure.
 */
function preStopSeconds(container: Obj): number {
  const preStop = container.lifecycle?.preStop;
  if (preStop === undefined) return 0;
  if (preStop.sleep) return preStop.sleep.seconds;
  const [node, flag, script, ...rest] = preStop.exec.command as string[];
  expect([node, flag, rest]).toEqual([IMAGE_NODE, '-e', []]);
  const ms = /^setTimeout\(\(\) => \{\}, (\d+)\)$/.exec(script!)?.[1];
  expect(ms, script).toBeDefined();
  return Number(ms) / 1000;
}

/** The attributes the OpenTelemetry SDK's environment detector (the one the gateway uses) reads from this value. */
function resourceAttributesOf(value: string): Obj {
  const saved = process.env.OTEL_RESOURCE_ATTRIBUTES;
  process.env.OTEL_RESOURCE_ATTRIBUTES = value;
  try {
    return detectResources({ detectors: [envDetector] }).attributes;
  } finally {
    if (saved === undefined) delete process.env.OTEL_RESOURCE_ATTRIBUTES;
    else process.env.OTEL_RESOURCE_ATTRIBUTES = saved;
  }
}

function load(name: string, file = `${RENDERED}/${name}.yaml`) {
  const docs = readYamlDocuments(file) as Obj[];
  const find = (kind: string, pred: (o: Obj) => boolean = () => true) => docs.filter((d) => d.kind === kind && pred(d));
  const one = (kind: string, pred?: (o: Obj) => boolean) => {
    const all = find(kind, pred);
    expect(all.length, `${name}: exactly one ${kind}`).toBe(1);
    return all[0]!;
  };
  // The gateway's own objects; the optional in-chart Redis (component: redis) has a Deployment and Service too.
  const gateway = (o: Obj) => o.metadata.labels?.['app.kubernetes.io/component'] !== 'redis';
  const deployment = one('Deployment', gateway);
  const service = () => one('Service', gateway);
  const pod = deployment.spec.template;
  const container = pod.spec.containers[0];
  const config = one('ConfigMap', (c) => c.metadata.name === container.envFrom[0].configMapRef.name).data as Record<string, string>;
  return { docs, find, one, deployment, service, pod, container, config };
}

const grants = (rules: Rule[]) => rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}/${res} ${v}`))));

describe('rendered snapshots are current', () => {
  it('ci/ has one values file per snapshot', () => {
    const ci = readdirSync(join(ROOT, 'charts/model-gateway/ci'))
      .map((f) => f.replace(/-values\.yaml$/, ''))
      .sort();
    expect(ci).toEqual([...SNAPSHOTS].sort());
  });

  it.each([
    ...SNAPSHOTS.flatMap((s) => [
      [`${s}.yaml`, 'charts/model-gateway'],
      [`${s}.notes.txt`, 'charts/model-gateway'],
    ]),
    ...kubeVersionRenders().map(([, file]) => [file.slice(RENDERED.length + 1), 'charts/model-gateway']),
    ['crds.yaml', 'charts/model-gateway-crds'],
  ])('%s was rendered from the current %s (else run `npm run render:chart`)', (file, chart) => {
    const header = read(`${RENDERED}/${file}`).split('\n', 1)[0];
    expect(header).toBe(`${SNAPSHOT_HEADER}${chartInputsHash(join(ROOT, chart))}`);
  });
});

describe.each(SNAPSHOTS)('helm template with ci/%s-values.yaml', (name) => {
  const r = load(name);
  const ns = r.config.MG_NAMESPACES!;
  const watched = ns === '*' ? [] : ns.split(',');

  it('every object has a kind, a name and (unless cluster-scoped) a namespace', () => {
    for (const d of r.docs) {
      expect(d.apiVersion && d.kind && d.metadata?.name, JSON.stringify(d).slice(0, 80)).toBeTruthy();
      if (!d.kind.startsWith('Cluster')) expect(d.metadata.namespace, `${d.kind}/${d.metadata.name}`).toBeTruthy();
    }
  });

  it('pods run non-root, read-only, without capabilities, with RuntimeDefault seccomp', () => {
    expect(r.pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(r.container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(r.container.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
  });

  it('probes hit /healthz and /readyz on the API port; ports follow MG_PORT and MG_METRICS_PORT', () => {
    const port = (n: string) => r.container.ports.find((p: Obj) => p.name === n).containerPort;
    expect(String(port('http'))).toBe(r.config.MG_PORT);
    expect(String(port('metrics'))).toBe(r.config.MG_METRICS_PORT);
    expect(port('http')).not.toBe(port('metrics'));
    expect(r.container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(r.container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
  });

  it('terminationGracePeriodSeconds = drain timeout + margin (+ preStop sleep)', () => {
    const drain = Number(/^(\d+)s$/.exec(r.config.MG_DRAIN_TIMEOUT!)![1]);
    expect(r.pod.spec.terminationGracePeriodSeconds).toBe(drain + 10 + preStopSeconds(r.container));
  });

  it('sets the contract environment (and nothing outside it but extraEnv)', () => {
    const names = [...Object.keys(r.config), ...r.container.env.map((e: Obj) => e.name)];
    for (const n of ALWAYS_SET) expect(names).toContain(n);
    expect(names.filter((n) => !CONTRACT_ENV.includes(n) && n !== 'NODE_OPTIONS')).toEqual([]);
    expect(r.config.MG_SOURCE).toBe('kubernetes');
    const env = Object.fromEntries(r.container.env.map((e: Obj) => [e.name, e]));
    expect(env.POD_NAME.valueFrom.fieldRef.fieldPath).toBe('metadata.name');
    expect(env.POD_NAMESPACE.valueFrom.fieldRef.fieldPath).toBe('metadata.namespace');
  });

  it('tracing.* sets the standard OTEL_* variables only when an endpoint is given, headers from a Secret', () => {
    const env = Object.fromEntries(r.container.env.map((e: Obj) => [e.name, e]));
    if (name !== 'full') {
      expect(Object.keys(env).filter((n) => n.startsWith('OTEL_') || n === 'MG_TRACE_CONTENT')).toEqual([]);
      return;
    }
    expect(env.OTEL_EXPORTER_OTLP_ENDPOINT.value).toBe('http://otel-collector.observability.svc:4318');
    expect(env.OTEL_EXPORTER_OTLP_PROTOCOL.value).toBe('http/protobuf');
    expect(env.OTEL_TRACES_SAMPLER.value).toBe('parentbased_traceidratio');
    expect(env.OTEL_TRACES_SAMPLER_ARG.value).toBe('0.25');
    // As the gateway's resource detector reads it: a ',' or '=' left unencoded would make it drop every attribute.
    expect(resourceAttributesOf(env.OTEL_RESOURCE_ATTRIBUTES.value)).toEqual(
      readYaml<Obj>('charts/model-gateway/ci/full-values.yaml').tracing.resourceAttributes,
    );
    expect(env.OTEL_EXPORTER_OTLP_HEADERS.valueFrom.secretKeyRef).toEqual({ name: 'otel-headers', key: 'headers' });
    expect(env.MG_TRACE_CONTENT.value).toBe('true');
  });

  it('per-token usage metrics follow gateway.usageMetricsPerToken, off unless a values file turns them on', () => {
    expect(r.config.MG_USAGE_METRICS_PER_TOKEN).toBe(name === 'full' ? 'true' : 'false');
  });

  it('MG_ID_KEYS_FILE is a file of the mounted id-key Secret (the chart one, or idKeys.existingSecret)', () => {
    const file = r.config.MG_ID_KEYS_FILE!;
    const mount = r.container.volumeMounts.find((m: Obj) => file.startsWith(`${m.mountPath}/`));
    expect(mount?.readOnly).toBe(true);
    const volume = r.pod.spec.volumes.find((v: Obj) => v.name === mount.name);
    const item = volume.secret.items.find((i: Obj) => `${mount.mountPath}/${i.path}` === file);
    expect(item).toBeDefined();
    expect(r.container.env.some((e: Obj) => e.name === 'MG_ID_KEYS')).toBe(false);
    const rendered = r.find('Secret', (s) => s.metadata.name === volume.secret.secretName);
    if (name === 'full') {
      expect([volume.secret.secretName, item.key]).toEqual(['gateway-id-keys', 'keys']);
      expect(rendered).toEqual([]);
    } else {
      expect(rendered.length).toBe(1);
      expect(Object.keys(rendered[0]!.data)).toEqual([item.key]);
      expect(rendered[0]!.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
    }
  });

  it('leader election is off only for a single gateway process (else every process writes every status)', () => {
    if (r.config.MG_LEADER_ELECTION !== 'false') return void expect(r.config.MG_LEADER_ELECTION).toBe('true');
    expect(r.deployment.spec.replicas).toBeLessThanOrEqual(1);
    expect(r.find('HorizontalPodAutoscaler')).toEqual([]);
    expect(r.config.MG_WORKERS).toBe('1');
  });

  it('start-up settings are checksummed into the pod template', () => {
    for (const k of ['checksum/config', 'checksum/id-keys', 'checksum/redis', 'checksum/responses-redis']) {
      expect(r.pod.metadata.annotations[k]).toMatch(/^[a-f0-9]{64}$/);
    }
  });

  it('the Service, PDB and spread constraints select the pods; the Service has http and metrics ports', () => {
    const labels = r.pod.metadata.labels;
    const svc = r.service();
    for (const [k, v] of Object.entries(svc.spec.selector)) expect(labels[k]).toBe(v);
    expect(svc.spec.ports.map((p: Obj) => [p.name, p.targetPort])).toEqual([
      ['http', 'http'],
      ['metrics', 'metrics'],
    ]);
    for (const [k, v] of Object.entries(r.one('PodDisruptionBudget').spec.selector.matchLabels)) expect(labels[k]).toBe(v);
    for (const t of r.pod.spec.topologySpreadConstraints) for (const [k, v] of Object.entries(t.labelSelector.matchLabels)) expect(labels[k]).toBe(v);
    expect(r.pod.spec.serviceAccountName).toBe(r.one('ServiceAccount').metadata.name);
  });

  it('RBAC: the watched rules in each watched namespace (cluster-wide only for "*"), Leases in the release namespace', () => {
    const sa = { kind: 'ServiceAccount', name: r.pod.spec.serviceAccountName, namespace: RELEASE_NS };
    const bound = (kind: string, role: Obj) => {
      const bindings = r.find(`${kind}Binding`, (b) => b.roleRef.name === role.metadata.name && b.metadata.namespace === role.metadata.namespace);
      expect(bindings.length).toBe(1);
      expect(bindings[0]!.subjects).toEqual([sa]);
    };
    const watchedRoles = r.find('Role', (role) => !role.rules.some((x: Rule) => x.resources.includes('leases')));
    const clusterRoles = r.find('ClusterRole');
    if (ns === '*') {
      expect(watchedRoles).toEqual([]);
      expect(clusterRoles.length).toBe(1);
      expect(clusterRoles[0]!.rules).toEqual(ruleFile.watched);
      bound('ClusterRole', clusterRoles[0]!);
    } else {
      expect(clusterRoles).toEqual([]);
      expect(r.find('ClusterRoleBinding')).toEqual([]);
      expect(watchedRoles.map((role) => role.metadata.namespace).sort()).toEqual([...watched].sort());
      for (const role of watchedRoles) {
        expect(role.rules).toEqual(ruleFile.watched);
        bound('Role', role);
      }
    }
    const leaseRoles = r.find('Role', (role) => role.rules.some((x: Rule) => x.resources.includes('leases')));
    if (r.config.MG_LEADER_ELECTION === 'true') {
      expect(leaseRoles.length).toBe(1);
      const role = leaseRoles[0]!;
      expect(role.metadata.namespace).toBe(RELEASE_NS);
      bound('Role', role);
      for (const rule of role.rules as Rule[]) {
        expect(rule.resources).toEqual(['leases']);
        if (rule.verbs.some((v) => v !== 'create')) expect(rule.resourceNames).toEqual([r.config.MG_LEASE_NAME]);
      }
      const granted = new Set([...grants(ruleFile.watched), ...grants(role.rules)]);
      expect(grants(REQUIRED_RULES as Rule[]).filter((g) => !granted.has(g))).toEqual([]);
    } else {
      expect(leaseRoles).toEqual([]);
    }
  });
});

describe('NOTES.txt', () => {
  it.each(SNAPSHOTS)('%s: names the watched namespaces, the base URL and a first curl', (name) => {
    const notes = read(`${RENDERED}/${name}.notes.txt`);
    const r = load(name);
    expect(notes).toContain(`Watched namespaces: ${r.config.MG_NAMESPACES!.split(',').join(', ')}`);
    const base = /export OPENAI_BASE_URL=(\S+)/.exec(notes)?.[1];
    expect(base).toMatch(/^https?:\/\/[^/\s]+\/v1$/);
    expect(notes).toContain('curl -sS "$OPENAI_BASE_URL/models" -H "Authorization: Bearer $OPENAI_API_KEY"');
    if (name === 'full') expect(base).toBe('https://llm.example.com/v1');
    else {
      expect(base).toBe('http://127.0.0.1:8080/v1');
      expect(notes).toContain(`port-forward svc/${r.service().metadata.name} 8080:8080`);
    }
  });
});

describe('scenario specifics', () => {
  it('default: the release namespace only, a generated key, two replicas, nothing optional', () => {
    const r = load('default');
    expect(r.config.MG_NAMESPACES).toBe(RELEASE_NS);
    expect(r.deployment.spec.replicas).toBe(2);
    expect(r.container.image).toBe(`model-gateway:${readYaml<Obj>('charts/model-gateway/Chart.yaml').appVersion}`);
    for (const kind of ['Ingress', 'ServiceMonitor', 'HorizontalPodAutoscaler', 'NetworkPolicy', 'ClusterRole']) expect(r.find(kind), kind).toEqual([]);
    for (const name of ['MG_REDIS_URL', 'MG_RESPONSES_REDIS_URL'])
      expect(
        r.container.env.some((e: Obj) => e.name === name),
        name,
      ).toBe(false);
  });

  it('namespaces: a Role per listed namespace, the named Lease', () => {
    const r = load('namespaces');
    expect(r.config.MG_NAMESPACES).toBe('team-a,team-b');
    expect(r.config.MG_LEASE_NAME).toBe('gateway-leader');
  });

  it('default: a preStop sleep holds SIGTERM until endpoints drop the pod (the gateway refuses connections from SIGTERM), inside the grace period', () => {
    const r = load('default');
    const drain = Number(/^(\d+)s$/.exec(r.config.MG_DRAIN_TIMEOUT!)![1]);
    expect(preStopSeconds(r.container)).toBeGreaterThanOrEqual(3);
    expect(r.pod.spec.terminationGracePeriodSeconds).toBeGreaterThan(preStopSeconds(r.container) + drain);
  });

  it('all-namespaces: MG_NAMESPACES is "*"', () => {
    expect(load('all-namespaces').config.MG_NAMESPACES).toBe('*');
  });

  it('full: every optional object, wired to the right ports and names', () => {
    const r = load('full');
    expect(r.deployment.spec.replicas).toBeUndefined(); // the HPA owns it
    expect(r.container.image).toMatch(/^registry\.example\.com\/platform\/model-gateway@sha256:[a-f0-9]{64}$/);
    expect(r.container.args).toEqual(['--log-level', 'debug']);
    expect(preStopSeconds(r.container)).toBe(5);
    expect(r.config).toMatchObject({ MG_MAX_JSON_BODY: '20mb', MG_MAX_UPLOAD_BODY: '200mb', MG_WORKERS: '2', MG_LEADER_ELECTION: 'true' });
    const redis = r.container.env.find((e: Obj) => e.name === 'MG_REDIS_URL').valueFrom.secretKeyRef;
    expect(redis).toEqual({ name: 'gateway-redis', key: 'url' });
    expect(r.find('Secret')).toEqual([]); // both Secrets are the user's

    const ingress = r.one('Ingress');
    expect(ingress.spec.ingressClassName).toBe('nginx');
    expect(ingress.spec.rules[0].http.paths[0].backend.service).toEqual({ name: r.service().metadata.name, port: { name: 'http' } });
    expect(r.one('ServiceMonitor').spec.endpoints[0]).toMatchObject({ port: 'metrics', path: '/metrics' });
    expect(r.one('ServiceMonitor').metadata.labels.release).toBe('kube-prometheus-stack');
    const hpa = r.one('HorizontalPodAutoscaler');
    expect(hpa.spec).toMatchObject({ minReplicas: 3, maxReplicas: 12, scaleTargetRef: { kind: 'Deployment', name: r.deployment.metadata.name } });
    expect(hpa.spec.metrics.map((m: Obj) => m.resource.name)).toEqual(['cpu', 'memory']);

    const np = r.one('NetworkPolicy');
    expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(np.spec.ingress.map((i: Obj) => i.ports[0].port)).toEqual(['http', 'metrics']);
    expect(np.spec.ingress[1].from[0].namespaceSelector.matchLabels['kubernetes.io/metadata.name']).toBe('monitoring');
    expect(np.spec.egress[0].ports.map((p: Obj) => p.port)).toEqual([53, 53]);
    expect(np.spec.egress[1].ports[0].port).toBe(443);

    const dashboard = r.one('ConfigMap', (c) => c.metadata.name.endsWith('-dashboard'));
    expect(dashboard.metadata.labels.grafana_dashboard).toBe('1');
    expect(JSON.parse(dashboard.data['model-gateway.json'])).toEqual(JSON.parse(read('charts/model-gateway/dashboards/model-gateway.json')));
  });

  it('no-leader-election: one replica, MG_LEADER_ELECTION=false, no Lease Role', () => {
    const r = load('no-leader-election');
    expect(r.deployment.spec.replicas).toBe(1);
    expect(r.config.MG_LEADER_ELECTION).toBe('false');
    expect(r.find('Role', (role) => role.rules.some((x: Rule) => x.resources.includes('leases')))).toEqual([]);
  });

  it('redis-url: the chart stores the URLs (limits, kept responses) and the given id keys in Secrets', () => {
    const r = load('redis-url');
    const secret = (n: string) => r.one('Secret', (s) => s.metadata.name === n);
    const redis = r.container.env.find((e: Obj) => e.name === 'MG_REDIS_URL').valueFrom.secretKeyRef;
    expect(Buffer.from(secret(redis.name).data[redis.key], 'base64').toString()).toBe('redis://redis.model-gateway.svc:6379/0');
    const responses = r.container.env.find((e: Obj) => e.name === 'MG_RESPONSES_REDIS_URL').valueFrom.secretKeyRef;
    expect(responses.name).not.toBe(redis.name);
    expect(Buffer.from(secret(responses.name).data[responses.key], 'base64').toString()).toBe('redis://responses-redis.model-gateway.svc:6379/0');
    const keys = r.pod.spec.volumes.find((v: Obj) => v.name === 'id-keys').secret;
    const values = readYaml<Obj>('charts/model-gateway/ci/redis-url-values.yaml');
    expect(Buffer.from(secret(keys.secretName).data[keys.items[0].key], 'base64').toString()).toBe(values.idKeys.keys.join(','));
  });
});

describe('the in-chart Redis (redis.inChart)', () => {
  it('is off by default: no Redis objects and no MG_REDIS_URL', () => {
    const r = load('default');
    expect(r.docs.filter((d) => d.metadata?.labels?.['app.kubernetes.io/component'] === 'redis')).toEqual([]);
    expect(r.container.env.some((e: Obj) => e.name === 'MG_REDIS_URL')).toBe(false);
  });

  it('runs one official redis pod without persistence, behind a Service the gateway URL names, apart from the gateway pods', () => {
    const r = load('in-chart-redis');
    const redis = r.one('Deployment', (d) => d.metadata.labels['app.kubernetes.io/component'] === 'redis');
    const svc = r.one('Service', (d) => d.metadata.labels['app.kubernetes.io/component'] === 'redis');
    const pod = redis.spec.template;
    const c = pod.spec.containers[0];
    expect(c.image).toMatch(/^redis:\d/);
    expect(c.args).toEqual(['--save', '', '--appendonly', 'no', '--maxmemory', '200mb', '--maxmemory-policy', 'noeviction']);
    expect(redis.spec.replicas).toBe(1);
    expect(pod.spec.securityContext.runAsNonRoot).toBe(true);
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(pod.spec.volumes).toEqual([{ name: 'data', emptyDir: {} }]);
    // The Service selects the Redis pod; the gateway's Service does not (nor the other way round).
    const matches = (sel: Obj, labels: Obj) => Object.entries(sel).every(([k, v]) => labels[k] === v);
    expect(matches(svc.spec.selector, pod.metadata.labels)).toBe(true);
    expect(matches(r.service().spec.selector, pod.metadata.labels)).toBe(false);
    expect(matches(svc.spec.selector, r.pod.metadata.labels)).toBe(false);
    const url = r.container.env.find((e: Obj) => e.name === 'MG_REDIS_URL').value;
    expect(url).toBe(`redis://${svc.metadata.name}.${RELEASE_NS}.svc:${svc.spec.ports[0].port}`);
    expect(r.find('Secret', (s) => s.metadata.name.endsWith('-redis'))).toEqual([]);
  });
});

describe('.Capabilities.KubeVersion gates (ci/full-values.yaml rendered per Kubernetes version)', () => {
  const floor = chartKubeFloor();
  const renders: [string, string][] = [[floor, `${RENDERED}/full.yaml`], ...kubeVersionRenders()];
  const withoutPreStop = (docs: Obj[]) =>
    docs.map((d) => {
      if (d.kind !== 'Deployment') return d;
      const copy = structuredClone(d);
      delete copy.spec.template.spec.containers[0].lifecycle;
      return copy;
    });

  it.each(renders)("Kubernetes %s: preStop sleeps 5 s natively from 1.30, with the image's node below", (version, file) => {
    const { container, pod } = load('full', file);
    if (compareVersions(version, '1.30.0') >= 0) expect(container.lifecycle.preStop).toEqual({ sleep: { seconds: 5 } });
    else expect(container.lifecycle.preStop.exec.command[0]).toBe(IMAGE_NODE);
    expect(preStopSeconds(container)).toBe(5);
    expect(pod.spec.terminationGracePeriodSeconds).toBe(40 + 10 + 5);
  });

  it.each(renders.slice(1))("Kubernetes %s: nothing but the preStop hook differs from the floor's render", (_version, file) => {
    const atFloor = withoutPreStop(readYamlDocuments(`${RENDERED}/full.yaml`) as Obj[]);
    expect(withoutPreStop(readYamlDocuments(file) as Obj[])).toEqual(atFloor);
  });
});

describe('rendered CRD chart', () => {
  it('renders every CRD of crds/ unchanged apart from the keep annotation', () => {
    const docs = readYamlDocuments(`${RENDERED}/crds.yaml`) as Obj[];
    const sources = readdirSync(join(ROOT, 'crds')).filter((f) => /\.ya?ml$/.test(f));
    const expected = sources.flatMap((f) => readYamlDocuments(`crds/${f}`) as Obj[]);
    expect(expected.length).toBeGreaterThan(0);
    expect(docs.map((d) => d.metadata.name).sort()).toEqual(expected.map((d) => d.metadata.name).sort());
    for (const want of expected) {
      const got = docs.find((d) => d.metadata.name === want.metadata.name)!;
      expect(got.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
      const { ['helm.sh/resource-policy']: _, ...annotations } = got.metadata.annotations;
      expect({ ...got, metadata: { ...got.metadata, annotations } }).toEqual({
        ...want,
        metadata: { ...want.metadata, annotations: { ...(want.metadata.annotations ?? {}) } },
      });
    }
  });
});
