import { describe, expect, it } from 'vitest';
import { compile } from './compile.js';
import { sha256Hex } from '../model/digest.js';
import { parseManifests } from './manifests.js';
import type { RawObject } from './resources.js';

const route = (name: string, spec: Record<string, unknown>, meta: Record<string, unknown> = {}): RawObject => ({
  apiVersion: 'modelgateway.io/v1alpha1',
  kind: 'ModelRoute',
  metadata: { name, ...meta },
  spec,
});
const group = (name: string, models: string[]): RawObject => ({ apiVersion: 'modelgateway.io/v1alpha1', kind: 'Group', metadata: { name }, spec: { models } });
const token = (name: string, spec: Record<string, unknown>, meta: Record<string, unknown> = {}): RawObject => ({
  apiVersion: 'modelgateway.io/v1alpha1',
  kind: 'GatewayToken',
  metadata: { name, ...meta },
  spec,
});
const secret = (name: string, stringData: Record<string, string>): RawObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData });
const backend = { name: 'up', baseURL: 'http://127.0.0.1:9/v1' };
const run = (objs: RawObject[]) =>
  compile(
    objs.map((object) => ({ object })),
    { now: Date.parse('2026-01-01T00:00:00Z') },
  );
const cond = (r: ReturnType<typeof run>, key: string, type: string) => r.statuses.find((s) => s.ref === key)?.conditions.find((c) => c.type === type);

describe('compile', () => {
  const cases: { name: string; objects: RawObject[]; key: string; type: string; status: string; reason: string }[] = [
    {
      name: 'valid route is ready',
      objects: [route('m', { backends: [backend] })],
      key: 'ModelRoute/default/m',
      type: 'Ready',
      status: 'True',
      reason: 'Ready',
    },
    {
      name: 'bad baseURL is InvalidSpec',
      objects: [route('m', { backends: [{ name: 'x', baseURL: 'ftp://x' }] })],
      key: 'ModelRoute/default/m',
      type: 'Accepted',
      status: 'False',
      reason: 'InvalidSpec',
    },
    {
      name: 'allowed betas on a backend that does not speak the Messages API is InvalidSpec',
      objects: [route('m', { backends: [{ ...backend, anthropicBetas: { allow: ['interleaved-thinking-2025-05-14'] } }] })],
      key: 'ModelRoute/default/m',
      type: 'Accepted',
      status: 'False',
      reason: 'InvalidSpec',
    },
    {
      name: 'a beta listed twice is InvalidSpec',
      objects: [route('m', { backends: [{ ...backend, api: 'anthropic', anthropicBetas: { allow: ['b1', 'b1'] } }] })],
      key: 'ModelRoute/default/m',
      type: 'Accepted',
      status: 'False',
      reason: 'InvalidSpec',
    },
    {
      name: 'missing upstream secret',
      objects: [route('m', { backends: [{ ...backend, apiKeySecretRef: { name: 's', key: 'k' } }] })],
      key: 'ModelRoute/default/m',
      type: 'ResolvedRefs',
      status: 'False',
      reason: 'SecretNotFound',
    },
    {
      name: 'missing secret key',
      objects: [secret('s', { other: 'x' }), route('m', { backends: [{ ...backend, apiKeySecretRef: { name: 's', key: 'k' } }] })],
      key: 'ModelRoute/default/m',
      type: 'ResolvedRefs',
      status: 'False',
      reason: 'SecretKeyNotFound',
    },
    {
      name: 'token without group',
      objects: [token('t', { group: 'nope', sha256: 'a'.repeat(64) })],
      key: 'GatewayToken/default/t',
      type: 'ResolvedRefs',
      status: 'False',
      reason: 'GroupNotFound',
    },
    {
      name: 'token with both refs',
      objects: [token('t', { group: 'g', sha256: 'a'.repeat(64), secretRef: { name: 's', key: 'k' } })],
      key: 'GatewayToken/default/t',
      type: 'Accepted',
      status: 'False',
      reason: 'InvalidSpec',
    },
    {
      name: 'expired token',
      objects: [group('g', []), token('t', { group: 'g', sha256: 'a'.repeat(64), expiresAt: '2025-01-01T00:00:00Z' })],
      key: 'GatewayToken/default/t',
      type: 'Ready',
      status: 'False',
      reason: 'Expired',
    },
    {
      name: 'disabled token',
      objects: [group('g', []), token('t', { group: 'g', sha256: 'a'.repeat(64), disabled: true })],
      key: 'GatewayToken/default/t',
      type: 'Ready',
      status: 'False',
      reason: 'Disabled',
    },
    {
      name: 'newer route claiming a model conflicts',
      objects: [
        route('b', { model: 'x', backends: [backend] }, { creationTimestamp: '2026-01-01T00:00:00Z' }),
        route('a', { model: 'x', backends: [backend] }, { creationTimestamp: '2026-02-01T00:00:00Z' }),
      ],
      key: 'ModelRoute/default/a',
      type: 'Accepted',
      status: 'False',
      reason: 'Conflict',
    },
    {
      name: 'duplicate key digest conflicts',
      objects: [group('g', []), token('t1', { group: 'g', sha256: 'b'.repeat(64) }), token('t2', { group: 'g', sha256: 'b'.repeat(64) })],
      key: 'GatewayToken/default/t2',
      type: 'Accepted',
      status: 'False',
      reason: 'Conflict',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const r = run(c.objects);
      expect(cond(r, c.key, c.type)).toMatchObject({ status: c.status, reason: c.reason });
    });
  }

  it('indexes tokens by the digest of the secret value and narrows models', () => {
    const r = run([
      secret('alice-key', { token: 'sk-alice' }),
      route('gpt-4o-mini', { backends: [backend] }),
      route('text-embedding-3-small', { backends: [backend] }),
      route('other', { backends: [backend] }),
      group('g', ['gpt-*', 'text-embedding-3-*']),
      token('alice', { group: 'g', secretRef: { name: 'alice-key', key: 'token' }, models: ['text-*'] }),
    ]);
    const t = r.table.tokensByDigest.get(sha256Hex('sk-alice'));
    expect(t?.group.models).toEqual(['gpt-4o-mini', 'text-embedding-3-small']);
    expect(t?.models).toEqual(['text-embedding-3-small']);
  });

  it("shares the group's model set with every token that does not narrow it (10,000 tokens, one set)", () => {
    const r = run([
      route('a', { backends: [backend] }),
      route('b', { backends: [backend] }),
      group('g', ['*']),
      token('wide1', { group: 'g', sha256: '1'.repeat(64) }),
      token('wide2', { group: 'g', sha256: '2'.repeat(64) }),
      token('narrow', { group: 'g', sha256: '3'.repeat(64), models: ['a'] }),
    ]);
    const get = (c: string) => r.table.tokensByDigest.get(c.repeat(64))!;
    expect(get('1').modelSet).toBe(get('1').group.modelSet);
    expect(get('2').modelSet).toBe(get('1').modelSet);
    expect(get('3').modelSet).not.toBe(get('3').group.modelSet);
    expect([...get('3').modelSet]).toEqual(['a']);
    expect(get('2').modelSet.has('b')).toBe(true);
  });

  it("gives a route's created time from its creationTimestamp, else from when the source first saw it, not a constant", () => {
    // Regression (issue 12, item 14): /v1/models said created: 0.
    const seenAt = Date.parse('2026-03-04T05:06:07.890Z');
    const r = compile([
      { object: route('stamped', { backends: [backend] }, { creationTimestamp: '2026-01-02T03:04:05Z' }), seenAt },
      { object: route('seen', { backends: [backend] }), seenAt },
      { object: route('unknown', { backends: [backend] }) },
    ]);
    expect(r.table.routes.get('stamped')?.created).toBe(Date.parse('2026-01-02T03:04:05Z') / 1000);
    expect(r.table.routes.get('seen')?.created).toBe(Math.floor(seenAt / 1000));
    expect(r.table.routes.get('unknown')?.created).toBe(0);
  });

  it('never puts secret values in messages', () => {
    const r = run([secret('s', { k: 'sk-very-secret' }), route('m', { backends: [{ ...backend, apiKeySecretRef: { name: 's', key: 'nope' } }] })]);
    expect(JSON.stringify(r.statuses)).not.toContain('sk-very-secret');
  });

  it('says why a Secret in the input is unusable (plain text in data), by field and line, instead of "not found"', () => {
    const yaml = [
      'apiVersion: v1', // 1
      'kind: Secret',
      'metadata: {name: alice-key}',
      'data:',
      '  token: sk-plain-text-key', // 5: "-" is no base64 character
      '---',
      'apiVersion: modelgateway.io/v1alpha1',
      'kind: GatewayToken',
      'metadata: {name: alice}',
      'spec: {group: g, secretRef: {name: alice-key, key: token}}',
      '',
    ].join('\n');
    const { objects } = parseManifests(yaml, 'x.yaml');
    for (const assumeSecretsPresent of [false, true]) {
      const r = compile([...objects, { object: group('g', []) }], { assumeSecretsPresent });
      const refs = cond(r, 'GatewayToken/default/alice', 'ResolvedRefs');
      expect(refs).toMatchObject({ status: 'False', reason: 'SecretNotFound' });
      expect(refs?.message).toBe(
        'Secret "alice-key" in namespace default is invalid: data.token (line 5): not base64 (kubectl refuses it too); write plain text under stringData',
      );
      expect(JSON.stringify(r.statuses)).not.toContain('sk-plain-text-key');
    }
  });

  it('keeps serving the valid objects when one is broken', () => {
    const r = run([route('good', { backends: [backend] }), route('bad', { backends: [] })]);
    expect([...r.table.routes.keys()]).toEqual(['good']);
  });

  it('warns about group patterns that match nothing', () => {
    const r = run([route('m', { backends: [backend] }), group('g', ['m', 'nothing-*'])]);
    expect(r.statuses.find((s) => s.ref === 'Group/default/g')?.warnings).toEqual(['model pattern "nothing-*" matches no served model']);
  });

  it('reports a misspelt kind of our API group instead of dropping it, and ignores other APIs', () => {
    const r = run([
      { apiVersion: 'modelgateway.io/v1alpha1', kind: 'ModelRoutes', metadata: { name: 'm' }, spec: {} },
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } },
    ]);
    expect(r.statuses).toHaveLength(1);
    expect(cond(r, 'ModelRoutes/default/m', 'Accepted')).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(cond(r, 'ModelRoutes/default/m', 'Accepted')?.message).toContain('unknown kind "ModelRoutes"');
  });

  it('does not call a token Ready whose Secret key is empty (no client can send it), nor let two such tokens conflict', () => {
    const r = run([
      secret('empty', { token: '  \n' }),
      group('g', ['*']),
      token('a', { group: 'g', secretRef: { name: 'empty', key: 'token' } }),
      token('b', { group: 'g', secretRef: { name: 'empty', key: 'token' } }),
    ]);
    for (const name of ['a', 'b']) {
      expect(cond(r, `GatewayToken/default/${name}`, 'ResolvedRefs')).toMatchObject({
        status: 'False',
        reason: 'SecretKeyNotFound',
        message: 'Secret "empty" has an empty key "token"',
      });
    }
    expect(r.table.tokensByDigest.size).toBe(0);
  });

  it('judges a Secret whose data kubectl would refuse (not padded base64) instead of calling it missing', () => {
    const yaml = [
      'apiVersion: v1\nkind: Secret\nmetadata: {name: plain}\ndata:\n  token: sk-plain-text-key',
      'apiVersion: v1\nkind: Secret\nmetadata: {name: exact}\ndata: {token: c2stYWJj}\n',
      'apiVersion: v1\nkind: Secret\nmetadata: {name: short}\ndata: {token: c2stYW}',
      'apiVersion: v1\nkind: Secret\nmetadata: {name: wrapped}\ndata:\n  token: |\n    c2stYWJj\n    ZGVm\n',
      'apiVersion: modelgateway.io/v1alpha1\nkind: Group\nmetadata: {name: g}\nspec: {models: ["*"]}',
      ...['plain', 'exact', 'short', 'wrapped'].map(
        (n) => `apiVersion: modelgateway.io/v1alpha1\nkind: GatewayToken\nmetadata: {name: ${n}}\nspec: {group: g, secretRef: {name: ${n}, key: token}}`,
      ),
    ].join('\n---\n');
    const r = compile(parseManifests(yaml, 's.yaml').objects, { now: 0 });
    const plain = cond(r, 'Secret/default/plain', 'Accepted');
    expect(plain).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(plain!.message).toBe('data.token (line 5): not base64 (kubectl refuses it too); write plain text under stringData');
    expect(cond(r, 'GatewayToken/default/plain', 'ResolvedRefs')).toMatchObject({
      reason: 'SecretNotFound',
      message: expect.stringMatching(/^Secret "plain" in namespace default is invalid: data\.\w+ \(line \d+\): not base64/),
    });
    expect(cond(r, 'Secret/default/short', 'Accepted')?.status).toBe('False');
    // Valid base64 stays quiet (no status of its own), line breaks included, as the API server decodes it.
    expect(r.statuses.filter((x) => x.kind === 'Secret').map((x) => x.name)).toEqual(['plain', 'short']);
    expect(r.table.tokensByDigest.has(sha256Hex('sk-abc'))).toBe(true);
    expect(r.table.tokensByDigest.has(sha256Hex('sk-abcdef'))).toBe(true);
    expect(JSON.stringify(r.statuses)).not.toContain('sk-plain-text-key');
  });

  it('names the line of each schema issue when parsed from YAML, and keeps statuses plain data', () => {
    const yaml = [
      'apiVersion: modelgateway.io/v1alpha1', // 1
      'kind: ModelRoute',
      'metadata: {name: m}',
      'spec:',
      '  backends:', // 5
      '  - name: up',
      '    baseURL: ftp://nope', // 7
      '---',
      'apiVersion: modelgateway.io/v1alpha1',
      'kind: GatewayToken', // 10
      'metadata: {name: t}',
      'spec:',
      '  group: g', // 13: neither secretRef nor sha256 → the issue is on spec
      '',
    ].join('\n');
    const { objects } = parseManifests(yaml, 'x.yaml');
    const r = compile(objects);
    const route = r.statuses.find((s) => s.ref === 'ModelRoute/default/m')!;
    expect(route.conditions[0]?.message).toMatch(/^spec\.backends\.0\.baseURL \(line 7\): /);
    expect(route.source).toEqual({ file: 'x.yaml', line: 1 });
    const tok = r.statuses.find((s) => s.ref === 'GatewayToken/default/t')!;
    expect(tok.conditions[0]?.message).toBe('spec (line 13): exactly one of secretRef or sha256 must be set');
    expect(tok.source).toEqual({ file: 'x.yaml', line: 9 });
  });

  it('compiles limits: a token narrows its group (both apply), per-model entries by first match, backend quotas', () => {
    const r = run([
      route('m', { model: 'gpt-4o-mini', defaultMaxOutputTokens: 1000, backends: [{ ...backend, limits: { requestsPerMinute: 60 } }] }),
      route('e', { model: 'embed', backends: [backend] }),
      {
        apiVersion: 'modelgateway.io/v1alpha1',
        kind: 'Group',
        metadata: { name: 'g' },
        spec: {
          models: ['*'],
          limits: {
            tokensPerDay: 1000,
            models: [
              { model: 'gpt-*', requestsPerMinute: 5 },
              { model: '*', concurrentRequests: 2 },
            ],
          },
        },
      },
      token('t', { group: 'g', sha256: 'a'.repeat(64), limits: { requestsPerMinute: 3, tokensPerMonth: 9 } }),
      token('u', { group: 'g', sha256: 'b'.repeat(64) }),
    ]);
    const t = r.table.tokensByDigest.get('a'.repeat(64))!;
    expect(t.limits.map((l) => [l.scope, l.field, l.limit])).toEqual([
      ['token/default/t', 'requestsPerMinute', 3],
      ['token/default/t', 'tokensPerMonth', 9],
      ['group/default/g', 'tokensPerDay', 1000],
    ]);
    expect(r.table.tokensByDigest.get('b'.repeat(64))!.limits).toBe(t.group.limits);
    expect(t.group.modelLimits.get('gpt-4o-mini')).toEqual([
      { scope: 'group/default/g/model/gpt-4o-mini', field: 'requestsPerMinute', metric: 'requests', window: 'minute', limit: 5 },
    ]);
    expect(t.group.modelLimits.get('embed')!.map((l) => l.field)).toEqual(['concurrentRequests']);
    const m = r.table.routes.get('gpt-4o-mini')!;
    expect(m.defaultMaxOutputTokens).toBe(1000);
    expect(m.backends[0]!.limits).toEqual([{ scope: 'backend/default/m/up', field: 'requestsPerMinute', metric: 'requests', window: 'minute', limit: 60 }]);
    expect(r.table.routes.get('embed')!.defaultMaxOutputTokens).toBe(4096);
    // `check` and `kubectl describe` show each object's own limits in its ResolvedRefs message.
    expect(cond(r, 'Group/default/g', 'ResolvedRefs')?.message).toBe('2 model(s) allowed; limits: tokensPerDay 1000, per-model limits on 2 model(s)');
    expect(cond(r, 'GatewayToken/default/t', 'ResolvedRefs')?.message).toBe('group "g", 2 model(s); limits: requestsPerMinute 3, tokensPerMonth 9');
    expect(cond(r, 'GatewayToken/default/u', 'ResolvedRefs')?.message).toBe('group "g", 2 model(s)');
  });

  it('refuses a per-model limit entry that sets no limit, and negative or fractional limits', () => {
    const r = run([
      { apiVersion: 'modelgateway.io/v1alpha1', kind: 'Group', metadata: { name: 'a' }, spec: { models: ['*'], limits: { models: [{ model: 'x' }] } } },
      { apiVersion: 'modelgateway.io/v1alpha1', kind: 'Group', metadata: { name: 'b' }, spec: { models: ['*'], limits: { requestsPerMinute: -1 } } },
      token('t', { group: 'a', sha256: 'a'.repeat(64), limits: { tokensPerDay: 1.5 } }),
    ]);
    expect(cond(r, 'Group/default/a', 'Accepted')?.message).toContain('set at least one limit besides model');
    expect(cond(r, 'Group/default/b', 'Accepted')?.status).toBe('False');
    expect(cond(r, 'GatewayToken/default/t', 'Accepted')?.status).toBe('False');
  });
});

describe('a backend’s allowed betas', () => {
  it('compile to a set when listed (empty: none), and stay unset otherwise (the API’s default applies)', () => {
    const native = { ...backend, api: 'anthropic' };
    const r = run([
      route('listed', { backends: [{ ...native, anthropicBetas: { allow: ['interleaved-thinking-2025-05-14'] } }] }),
      route('empty', { backends: [{ ...native, anthropicBetas: { allow: [] } }] }),
      route('unset', { backends: [native] }),
    ]);
    const betas = (model: string) => r.table.routes.get(model)!.backends[0]!.anthropicBetas;
    expect(betas('listed')).toEqual(new Set(['interleaved-thinking-2025-05-14']));
    expect(betas('empty')).toEqual(new Set());
    expect(betas('unset')).toBeUndefined();
    expect('anthropicBetas' in r.table.routes.get('unset')!.backends[0]!).toBe(false);
  });
});

describe('a backend’s api', () => {
  it('compiles chatCompletions as given and defaults to openai; an unknown api refuses the route', () => {
    const r = run([
      route('chat-only', { backends: [{ ...backend, api: 'chatCompletions' }] }),
      route('default', { backends: [backend] }),
      route('unknown', { backends: [{ ...backend, api: 'completions' }] }),
    ]);
    expect(r.table.routes.get('chat-only')!.backends[0]!.api).toBe('chatCompletions');
    expect(r.table.routes.get('default')!.backends[0]!.api).toBe('openai');
    expect(r.table.routes.has('unknown')).toBe(false);
  });
});
