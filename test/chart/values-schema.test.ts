// values.yaml satisfies values.schema.json, and values a user could get wrong are rejected by it (Helm validates
// values against the schema on install, upgrade, lint and template).
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parseIdKeys } from '../../src/features/sealed-ids/id-keys.js';
import { read, readYaml } from './repo.js';

type Values = Record<string, any>;

function validator(chartDir: string) {
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  return ajv.compile(JSON.parse(read(`${chartDir}/values.schema.json`)));
}

/** Defaults with one change applied; `undefined` deletes the key. */
function withChange(defaults: Values, path: string, value: unknown): Values {
  const copy = structuredClone(defaults);
  const keys = path.split('.');
  let node = copy;
  for (const k of keys.slice(0, -1)) node = node[k] ??= {};
  if (value === undefined) delete node[keys.at(-1)!];
  else node[keys.at(-1)!] = value;
  return copy;
}

describe('charts/model-gateway values.schema.json', () => {
  const validate = validator('charts/model-gateway');
  const defaults = readYaml<Values>('charts/model-gateway/values.yaml');

  it('accepts the default values.yaml', () => {
    expect(validate(defaults), JSON.stringify(validate.errors)).toBe(true);
  });

  it.each<[string, unknown]>([
    ['gateway.watchNamespaces', ['team-a', 'team-b']],
    ['gateway.watchNamespaces', ['*']],
    ['image.digest', `sha256:${'a'.repeat(64)}`],
    ['image.repository', 'registry.example.com:5000/platform/model-gateway'],
    ['redis', { enabled: true, url: 'redis://redis:6379/0', existingSecret: '', existingSecretKey: 'url' }],
    ['redis', { enabled: true, existingSecret: 'redis-credentials', existingSecretKey: 'url' }],
    ['idKeys.keys', ['k7S0Yk0r8Xl7p4z1Jv3c2QmB9nW5sT6uH8eR0aD2fG4=']],
    ['podDisruptionBudget.maxUnavailable', '50%'],
    ['resources.requests.cpu', 0.5],
    ['gateway.maxJsonBody', '10mb'],
    ['gateway.maxUploadBody', '1.5GiB'],
    ['gateway.logLevel', 'silent'],
    ['tracing.samplerRatio', 0.1],
    ['tracing.samplerRatio', '0.1'],
    ['idKeys.keys', ['00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff']],
    ['global', { imageRegistry: 'x' }],
  ])('accepts %s = %j', (path, value) => {
    expect(validate(withChange(defaults, path, value)), JSON.stringify(validate.errors)).toBe(true);
  });

  it.each<[string, unknown]>([
    ['replicaCount', -1],
    ['replicaCount', 1.5],
    ['replicaCount', '2'],
    ['service.port', 0],
    ['service.port', 70000],
    ['service.metricsPort', 'metrics'],
    ['gateway.port', -8080],
    ['gateway.metricsPort', 65536],
    ['unknownTopLevelKey', true],
    ['image.pullPolicy', 'Sometimes'],
    ['image.tag', 'latest'],
    ['image.tag', 'has space'],
    ['image.digest', 'sha256:short'],
    ['image.repository', ''],
    ['image.registry', 'docker.io'],
    ['gateway.watchNamespaces', ['*', 'team-a']],
    ['gateway.watchNamespaces', ['Team_A']],
    ['gateway.watchNamespaces', 'team-a'],
    ['gateway.watchNamespaces', ['a', 'a']],
    ['gateway.logLevel', 'verbose'],
    ['gateway.drainTimeoutSeconds', -5],
    ['gateway.drainTimeoutSeconds', '25s'],
    ['gateway.workers', 0],
    ['gateway.maxJsonBody', 'ten megabytes'],
    ['gateway.leaderElection.enabled', 'yes'],
    ['gateway.leaderElection.leaseName', 'Not A Name'],
    ['gateway.extraEnv', [{ value: 'missing name' }]],
    ['gateway.drainTimeout', 25],
    ['idKeys.keys', ['short']],
    ['idKeys.keys', ['00112233445566778899aabbccddeeff']],
    ['idKeys.keys', ['not base64 nor hex, not at all!!']],
    ['gateway.secretSelector', 'team="a"'],
    ['gateway.maxUploadBody', '20 megs'],
    ['gateway.maxJsonBody', '512'],
    ['tracing.samplerRatio', '1.5'],
    ['tracing.samplerRatio', 1.5],
    ['tracing.samplerRatio', 'lots'],
    ['idKeys.existingSecret', 'UPPER'],
    ['redis', { enabled: true, url: '', existingSecret: '', existingSecretKey: 'url' }],
    ['redis.url', 'http://not-redis'],
    ['service.type', 'ExternalName'],
    ['ingress', { enabled: true, className: '', annotations: {}, hosts: [], tls: [] }],
    ['ingress.hosts', [{ host: 'x.example.com', paths: [{ path: 'no-slash', pathType: 'Prefix' }] }]],
    ['ingress.hosts', [{ host: 'x.example.com', paths: [{ path: '/', pathType: 'Regex' }] }]],
    ['podSecurityContext.runAsNonRoot', false],
    ['podSecurityContext.runAsUser', 0],
    ['securityContext.privileged', true],
    ['securityContext.allowPrivilegeEscalation', true],
    ['resources.requests.cpu', 'lots'],
    ['resources.limit', { cpu: 1 }],
    ['autoscaling.minReplicas', 0],
    ['autoscaling.targetCPUUtilizationPercentage', 0],
    ['podDisruptionBudget.maxUnavailable', 0],
    ['podDisruptionBudget.maxUnavailable', '150%'],
    ['topologySpread.whenUnsatisfiable', 'Maybe'],
    ['metrics.serviceMonitor.interval', '30 seconds'],
    ['podAnnotations', { 'a/b': 1 }],
    ['networkPolicy.egress.to', 'everything'],
  ])('rejects %s = %j', (path, value) => {
    expect(validate(withChange(defaults, path, value))).toBe(false);
  });

  describe('leader election off (every gateway process then writes every status, and the writers conflict)', () => {
    const off = (changes: [string, unknown][]) =>
      [['gateway.leaderElection.enabled', false] as [string, unknown], ...changes].reduce((v, [path, value]) => withChange(v, path, value), defaults);

    it.each<[string, [string, unknown][]]>([
      ['one replica', [['replicaCount', 1]]],
      ['no replica', [['replicaCount', 0]]],
    ])('is accepted with %s', (_, changes) => {
      expect(validate(off(changes)), JSON.stringify(validate.errors)).toBe(true);
    });

    it.each<[string, [string, unknown][]]>([
      ['the default two replicas', []],
      ['three replicas', [['replicaCount', 3]]],
      [
        'an HPA (the HPA owns the count)',
        [
          ['replicaCount', 1],
          ['autoscaling.enabled', true],
        ],
      ],
      [
        'two workers in one pod',
        [
          ['replicaCount', 1],
          ['gateway.workers', 2],
        ],
      ],
    ])('is refused with %s', (_, changes) => {
      expect(validate(off(changes))).toBe(false);
    });

    it('leader election on allows any of those', () => {
      expect(validate(withChange(withChange(defaults, 'autoscaling.enabled', true), 'gateway.workers', 2))).toBe(true);
    });
  });

  it.each(['replicaCount', 'image', 'gateway', 'service', 'idKeys', 'gateway.port', 'image.pullPolicy'])('rejects values without %s', (path) => {
    expect(validate(withChange(defaults, path, undefined))).toBe(false);
  });
});

describe('idKeys.keys: the schema and the gateway agree on which keys are valid', () => {
  const validate = validator('charts/model-gateway');
  const defaults = readYaml<Values>('charts/model-gateway/values.yaml');
  const b64 = (n: number) => Buffer.alloc(n, 7).toString('base64');
  const hex = (n: number) => Buffer.alloc(n, 7).toString('hex');
  it.each([
    b64(32),
    b64(48),
    hex(32),
    hex(31),
    b64(31),
    b64(24),
    hex(16),
    `hex:${hex(32)}`,
    `base64:${b64(32)}`,
    Buffer.alloc(32, 250).toString('base64url'),
    'not a key at all, not at all!!!!!!!!!!!!!!!!!!!!!!!!!!',
    '',
  ])('%j', (key) => {
    let gateway = true;
    try {
      parseIdKeys(key, 'test');
    } catch {
      gateway = false;
    }
    expect(validate(withChange(defaults, 'idKeys.keys', [key])), `schema vs gateway for ${JSON.stringify(key)}`).toBe(gateway);
  });
});

describe('charts/model-gateway-crds values.schema.json', () => {
  const validate = validator('charts/model-gateway-crds');
  it('accepts the defaults and rejects a bad type or an unknown key', () => {
    const defaults = readYaml<Values>('charts/model-gateway-crds/values.yaml');
    expect(validate(defaults)).toBe(true);
    expect(validate({ keepOnUninstall: 'yes' })).toBe(false);
    expect(validate({ ...defaults, install: true })).toBe(false);
  });
});
