// The CRDs on a real kube-apiserver v1.26: crds/ and the CRD chart's copies are accepted on create and on update,
// client-side and server-side (the server compiles every CEL rule then), become Established, every CEL rule refuses
// an object that breaks it with the rule's message, and examples/kubernetes/ is admitted with strict validation.
// The tests run in order on one server of their own (not the worker's shared one: the CRDs must not exist before
// the create and the install they check): the later ones use the CRDs the third one installs.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validationRules } from '../../src/compile/crd/validation-rules.js';
import { type ChartCopies, chartCopiesForEnvtest, objectsOf, repoRoot } from './charts-for-envtest.js';
import { describeEnvtest, type Envtest, startEnvtest, kubectlOk } from './envtest.js';

const CRD_DIR = join(repoRoot, 'crds');
const CRD_FILES = readdirSync(CRD_DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .map((f) => join(CRD_DIR, f));
const CRDS = CRD_FILES.map((f) => parse(readFileSync(f, 'utf8')));
const CRD_NAMES = CRDS.map((c) => c.metadata.name as string);
const RULES = CRDS.flatMap(validationRules);

const ref = { name: 'creds', key: 'apiKey' };
const backend = { name: 'b', baseURL: 'https://example.com/v1' };
const route = (backendFields: Record<string, unknown>) => ({ kind: 'ModelRoute', spec: { backends: [{ ...backend, ...backendFields }] } });

/** For each CEL rule (`Kind path: message`), an object that breaks that rule and no other. */
const BROKEN: Record<string, { kind: string; spec: unknown }> = {
  'GatewayToken spec: exactly one of secretRef or sha256 must be set': {
    kind: 'GatewayToken',
    spec: { group: 'team-a', secretRef: { name: 'k', key: 'token' }, sha256: 'a'.repeat(64) },
  },
  'ModelRoute spec.backends[]: set apiKeySecretRef or auth, not both': route({ apiKeySecretRef: ref, auth: { bearer: { secretRef: ref } } }),
  'ModelRoute spec.backends[]: anthropicBetas needs api: anthropic': route({ anthropicBetas: { allow: ['interleaved-thinking-2025-05-14'] } }),
  'ModelRoute spec.backends[]: pathStyle azureDeployments needs an api-version query parameter': route({
    pathStyle: 'azureDeployments',
    query: [{ name: 'x', value: 'y' }],
  }),
  'ModelRoute spec.backends[].auth: exactly one of bearer, header, query, none, awsSigV4, gcp, azureAD must be set': route({
    auth: { bearer: { secretRef: ref }, none: {} },
  }),
  'ModelRoute spec.backends[].auth.header.name: not one of host, content-length, content-type, content-encoding, transfer-encoding, connection, keep-alive, te, trailer, upgrade, accept-encoding, x-request-id, traceparent, tracestate':
    route({ auth: { header: { name: 'Host', secretRef: ref } } }),
  'ModelRoute spec.backends[].auth.azureAD: a client secret needs tenantId and clientId': route({ auth: { azureAD: { tenantId: 't', secretRef: ref } } }),
  'ModelRoute spec.backends[].headers[]: exactly one of value or secretRef must be set': route({ headers: [{ name: 'x-a', value: 'v', secretRef: ref }] }),
  'ModelRoute spec.backends[].headers[].name: not one of host, content-length, content-type, content-encoding, transfer-encoding, connection, keep-alive, te, trailer, upgrade, accept-encoding, x-request-id, traceparent, tracestate':
    route({ headers: [{ name: 'Content-Length', value: '1' }] }),
  'ModelRoute spec.backends[].query[]: exactly one of value or secretRef must be set': route({ query: [{ name: 'x' }] }),
};
const ruleKey = (r: (typeof RULES)[number]) => `${r.kind} ${r.path}: ${r.message}`;

describeEnvtest('the CRDs on a real kube-apiserver', () => {
  let server: Envtest;
  let charts: ChartCopies;
  let chartCrds: string;
  beforeAll(() => {
    charts = chartCopiesForEnvtest();
    chartCrds = charts.template('model-gateway-crds');
    server = startEnvtest();
  }, 120_000);
  afterAll(() => {
    server?.stop();
    charts?.remove();
  });

  const ok = (args: string[], input?: string) => kubectlOk(server, args, input);
  const crdFileArgs = CRD_FILES.flatMap((f) => ['-f', f]);

  it('finds the three CRDs in crds/ and the same three in the CRD chart', () => {
    expect(CRD_NAMES).toEqual(['gatewaytokens.modelgateway.io', 'groups.modelgateway.io', 'modelroutes.modelgateway.io']);
    expect(objectsOf(chartCrds).map((o) => o.name)).toEqual(CRD_NAMES);
  });

  it('crds/ and the chart copies are accepted on create, client-side and server-side (server dry run)', () => {
    for (const [args, input] of [
      [crdFileArgs, undefined],
      [['-f', '-'], chartCrds],
    ] as const) {
      const clientSide = ok(['apply', '--dry-run=server', '--validate=strict', ...args], input);
      const serverSide = ok(['apply', '--server-side', '--dry-run=server', '--validate=strict', ...args], input);
      for (const name of CRD_NAMES) {
        expect(clientSide).toContain(`customresourcedefinition.apiextensions.k8s.io/${name} created (server dry run)`);
        expect(serverSide).toContain(`customresourcedefinition.apiextensions.k8s.io/${name} serverside-applied (server dry run)`);
      }
    }
  });

  it('crds/ installs client-side and becomes Established; server-side and chart applies over it update without conflict', () => {
    ok(['apply', '--validate=strict', ...crdFileArgs]);
    ok(['wait', '--for=condition=Established', '--timeout=30s', ...CRD_NAMES.map((n) => `crd/${n}`)]);
    // Server-side over client-side is the migration that conflicted while a file differed from what the server stores.
    ok(['apply', '--server-side', '--validate=strict', ...crdFileArgs]);
    ok(['apply', '--server-side', '--validate=strict', '-f', '-'], chartCrds);
    ok(['apply', '--validate=strict', '-f', '-'], chartCrds);
    ok(['wait', '--for=condition=Established', '--timeout=30s', ...CRD_NAMES.map((n) => `crd/${n}`)]);
    const live = JSON.parse(ok(['get', 'crd', ...CRD_NAMES, '-o', 'json'])).items;
    for (const crd of live) expect(crd.metadata.annotations['helm.sh/resource-policy'], crd.metadata.name).toBe('keep');
  });

  it('has a broken object for every CEL rule of every CRD, and none for a rule that is gone', () => {
    expect(RULES.length).toBeGreaterThan(0);
    const keys = RULES.map(ruleKey);
    for (const key of keys) expect(BROKEN, `no broken object for the rule "${key}": add one to BROKEN`).toHaveProperty([key]);
    expect(Object.keys(BROKEN).sort()).toEqual([...new Set(keys)].sort());
  });

  it('each CEL rule refuses the object that breaks it, with its message', () => {
    ok(['create', 'namespace', 'cel-rules']);
    const objects = RULES.map((r, i) => ({
      apiVersion: `modelgateway.io/${r.version}`,
      kind: BROKEN[ruleKey(r)]!.kind,
      metadata: { name: `rule-${i}`, namespace: 'cel-rules' },
      spec: BROKEN[ruleKey(r)]!.spec,
    }));
    const r = server.kubectl(['apply', '--validate=strict', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
    expect(r.status).not.toBe(0);
    const errors = r.stderr.split('\n');
    RULES.forEach((rule, i) => {
      const error = errors.find((l) => l.includes(`"rule-${i}" is invalid`));
      expect(error, `rule-${i} (${ruleKey(rule)}) was not refused: ${r.stdout}`).toBeDefined();
      expect(error).toContain(rule.message);
    });
    expect(r.stdout).not.toMatch(/created|configured/);
  });

  it('admits a route with a backend of every auth kind, headers and query parameters of both forms, Azure paths', () => {
    ok(['create', 'namespace', 'auth-kinds']);
    const auths = [
      { bearer: { secretRef: ref } },
      { header: { name: 'api-key', secretRef: ref } },
      { query: { name: 'key', secretRef: ref } },
      { none: {} },
      { awsSigV4: { region: 'us-east-1' } },
      { gcp: {} },
      { azureAD: { tenantId: 't', clientId: 'c', secretRef: ref } },
    ];
    const backends = [
      ...auths.map((auth, i) => ({ ...backend, name: `b${i}`, auth })),
      {
        ...backend,
        name: 'key',
        apiKeySecretRef: ref,
        headers: [
          { name: 'anthropic-version', value: '2023-06-01' },
          { name: 'OpenAI-Project', secretRef: ref },
        ],
      },
      {
        ...backend,
        name: 'azure',
        pathStyle: 'azureDeployments',
        query: [
          { name: 'api-version', value: '2024-10-21' },
          { name: 'x', secretRef: ref },
        ],
      },
    ];
    const routeObject = {
      apiVersion: 'modelgateway.io/v1alpha1',
      kind: 'ModelRoute',
      metadata: { name: 'every-kind', namespace: 'auth-kinds' },
      spec: { backends },
    };
    expect(ok(['apply', '--validate=strict', '-f', '-'], JSON.stringify(routeObject))).toContain('modelroute.modelgateway.io/every-kind created');
    const stored = JSON.parse(ok(['get', '-n', 'auth-kinds', 'modelroute', 'every-kind', '-o', 'json']));
    expect(stored.spec.backends.map((b: { auth?: object }) => Object.keys(b.auth ?? {})[0])).toEqual([
      ...auths.map((a) => Object.keys(a)[0]),
      undefined,
      undefined,
    ]);
    // An empty auth kind stays empty: a field in it is refused, as the gateway refuses it.
    const withField = {
      ...routeObject,
      metadata: { name: 'none-with-field', namespace: 'auth-kinds' },
      spec: { backends: [{ ...backend, auth: { none: { x: 1 } } }] },
    };
    const refused = server.kubectl(['apply', '--validate=strict', '-f', '-'], JSON.stringify(withField));
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/spec\.backends\[0\]\.auth\.none: Too many: 1: must have at most 0 items/);
  });

  it("refuses a Group's per-model limit that names only the model (minProperties), and admits one with a limit", () => {
    ok(['create', 'namespace', 'group-limits']);
    const group = (entry: Record<string, unknown>) =>
      JSON.stringify({
        apiVersion: 'modelgateway.io/v1alpha1',
        kind: 'Group',
        metadata: { name: 'g', namespace: 'group-limits' },
        spec: { models: ['*'], limits: { models: [entry] } },
      });
    const refused = server.kubectl(['apply', '--validate=strict', '-f', '-'], group({ model: 'gpt-4o*' }));
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/spec\.limits\.models\[0\]: Invalid value: .*should have at least 2 properties/);
    expect(ok(['apply', '--validate=strict', '-f', '-'], group({ model: 'gpt-4o*', tokensPerDay: 1000 }))).toContain('group.modelgateway.io/g created');
  });

  it('admits prices and money limits written as decimal strings, and refuses any other spelling as the gateway does', () => {
    ok(['create', 'namespace', 'money']);
    const object = (kind: string, name: string, spec: unknown) =>
      JSON.stringify({ apiVersion: 'modelgateway.io/v1alpha1', kind, metadata: { name, namespace: 'money' }, spec });
    const pricing = {
      inputPerMTok: '3.00',
      cachedInputPerMTok: '0.30',
      cacheWritePerMTok: '3.75',
      cacheWrite1hPerMTok: '6',
      outputPerMTok: '15.00',
      imagePer: [{ size: '1024x1024', quality: 'hd', price: '0.08' }, { price: '0.04' }],
      audioInputPerSecond: '0.0001',
      speechPerMChars: '15',
      videoPerSecond: '999999999.999999',
    };
    const priced = (p: unknown) => ({ backends: [{ ...backend, pricing: p }] });
    expect(ok(['apply', '--validate=strict', '-f', '-'], object('ModelRoute', 'priced', priced(pricing)))).toContain(
      'modelroute.modelgateway.io/priced created',
    );
    const limits = { costPerDay: '50', costPerMonth: '2500.00', warnAt: 80 };
    const groupSpec = { models: ['*'], limits: { ...limits, models: [{ model: 'claude-*', costPerDay: '0.000001' }] } };
    expect(ok(['apply', '--validate=strict', '-f', '-'], object('Group', 'g', groupSpec))).toContain('group.modelgateway.io/g created');
    const tokenSpec = { group: 'g', sha256: 'a'.repeat(64), limits };
    expect(ok(['apply', '--validate=strict', '-f', '-'], object('GatewayToken', 't', tokenSpec))).toContain('gatewaytoken.modelgateway.io/t created');

    const refuse = (json: string, message: RegExp) => {
      const r = server.kubectl(['apply', '--validate=strict', '-f', '-'], json);
      expect(r.status, json).not.toBe(0);
      expect(r.stderr).toMatch(message);
    };
    for (const bad of ['1e-7', '0.0000001', '-1', '1.', '.5', '1000000000'])
      refuse(object('ModelRoute', 'bad', priced({ inputPerMTok: bad })), /spec\.backends\[0\]\.pricing\.inputPerMTok: Invalid value: .*should match/);
    refuse(
      object('ModelRoute', 'bad', priced({ outputPerMTok: 15 })),
      /spec\.backends\[0\]\.pricing\.outputPerMTok: Invalid value: "integer": .*must be of type string/,
    );
    refuse(object('ModelRoute', 'bad', priced({})), /spec\.backends\[0\]\.pricing: Invalid value: .*should have at least 1 properties/);
    refuse(object('Group', 'bad', { models: ['*'], limits: { costPerMonth: '2,500' } }), /spec\.limits\.costPerMonth: Invalid value: .*should match/);
    refuse(
      object('GatewayToken', 'bad', { ...tokenSpec, limits: { costPerDay: '1', warnAt: 101 } }),
      /spec\.limits\.warnAt: Invalid value: 101: .*less than or equal to 100/,
    );
  });

  it("admits a native backend's allowed betas, and refuses a beta name, a list or a duplicate the gateway refuses", () => {
    ok(['create', 'namespace', 'betas']);
    const betas = (anthropicBetas: unknown) =>
      JSON.stringify({
        apiVersion: 'modelgateway.io/v1alpha1',
        kind: 'ModelRoute',
        metadata: { name: 'claude', namespace: 'betas' },
        spec: { backends: [{ ...backend, api: 'anthropic', anthropicBetas }] },
      });
    expect(ok(['apply', '--validate=strict', '-f', '-'], betas({ allow: ['interleaved-thinking-2025-05-14', 'context-1m-2025-08-07'] }))).toContain(
      'modelroute.modelgateway.io/claude created',
    );
    expect(ok(['apply', '--validate=strict', '-f', '-'], betas({ allow: [] }))).toContain('modelroute.modelgateway.io/claude configured');
    const refuse = (json: string, message: RegExp) => {
      const r = server.kubectl(['apply', '--validate=strict', '-f', '-'], json);
      expect(r.status, json).not.toBe(0);
      expect(r.stderr).toMatch(message);
    };
    refuse(betas({ allow: ['Interleaved Thinking'] }), /spec\.backends\[0\]\.anthropicBetas\.allow\[0\]: Invalid value: .*should match/);
    refuse(betas({ allow: ['a', 'a'] }), /spec\.backends\[0\]\.anthropicBetas\.allow\[1\]: Duplicate value: "a"/);
    refuse(
      betas({ allow: Array.from({ length: 65 }, (_, i) => `beta-${i}`) }),
      /spec\.backends\[0\]\.anthropicBetas\.allow: Too many: 65: must have at most 64 items/,
    );
    refuse(betas({}), /spec\.backends\[0\]\.anthropicBetas\.allow: Required value/);
    refuse(betas({ allow: ['a'], deny: ['b'] }), /unknown field "spec\.backends\[0\]\.anthropicBetas\.deny"/);
  });

  it('admits examples/kubernetes/ with strict field validation, client-side and then server-side', () => {
    const examples = join(repoRoot, 'examples/kubernetes');
    const expected = readdirSync(examples)
      .filter((f) => f.endsWith('.yaml'))
      .flatMap((f) => objectsOf(readFileSync(join(examples, f), 'utf8')));
    const created = ok(['apply', '--validate=strict', '-f', examples]);
    const applied = ok(['apply', '--server-side', '--validate=strict', '-f', examples]);
    for (const o of expected) {
      expect(created).toMatch(new RegExp(`^${o.kind.toLowerCase()}[^/]*/${o.name} created$`, 'm'));
      expect(applied).toMatch(new RegExp(`^${o.kind.toLowerCase()}[^/]*/${o.name} serverside-applied$`, 'm'));
    }
    expect(expected.filter((o) => o.kind === 'GatewayToken').length).toBeGreaterThan(0);
  });
});
