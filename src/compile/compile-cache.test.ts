import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compile } from './compile.js';
import { sha256Hex } from '../model/digest.js';
import { cachedKeyDigest, DerivedCache, internModels, Invalid, parsedURL, validateCached } from './compile-cache.js';
import type { RawObject } from './resources.js';

describe('compile cache', () => {
  it('validates an unchanged object once, and a replaced object again', () => {
    let calls = 0;
    const schema = z.object({ a: z.number() }).refine(() => (calls++, true));
    const o = { a: 1 };
    expect(validateCached(schema, o)).toBe(validateCached(schema, o));
    expect(calls).toBe(1);
    validateCached(schema, { a: 1 });
    expect(calls).toBe(2);
  });

  it("keeps the source's object when validation changed nothing, zod's copy when it filled in a default", () => {
    const schema = z.object({ a: z.number(), b: z.object({ c: z.array(z.number()) }), d: z.boolean().default(false) }).passthrough();
    const complete = { a: 1, b: { c: [1, 2] }, d: true, extra: 'x' };
    expect(validateCached(schema, complete)).toBe(complete);
    const partial = { a: 1, b: { c: [1, 2] } };
    const parsed = validateCached(schema, partial);
    expect(parsed).not.toBe(partial);
    expect(parsed).toEqual({ a: 1, b: { c: [1, 2] }, d: false });
    const invalid = validateCached(schema, { a: 'one' });
    expect(invalid).toBeInstanceOf(Invalid);
    expect((invalid as Invalid).error.issues[0]?.path).toEqual(['a']);
  });

  it('hashes a key once per Secret object and key', () => {
    const secret = {};
    let calls = 0;
    const compute = () => (calls++, 'd');
    expect([cachedKeyDigest(secret, 'k', compute), cachedKeyDigest(secret, 'k', compute)]).toEqual(['d', 'd']);
    expect(calls).toBe(1);
    expect(parsedURL('https://api.example.com/v1')).toEqual({ origin: 'https://api.example.com', pathname: '/v1' });
  });

  it('a rotated Secret (a new object under the same name) yields the new key digest', () => {
    const gv = 'modelgateway.io/v1alpha1';
    const group: RawObject = { apiVersion: gv, kind: 'Group', metadata: { name: 'g' }, spec: { models: [] } };
    const token: RawObject = { apiVersion: gv, kind: 'GatewayToken', metadata: { name: 't' }, spec: { group: 'g', secretRef: { name: 's', key: 'k' } } };
    const secret = (v: string): RawObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: Buffer.from(v).toString('base64') } });
    const first = compile([group, token, secret('one')].map((object) => ({ object })));
    const second = compile([group, token, secret('two')].map((object) => ({ object })));
    expect([...first.table.tokensByDigest.keys()]).toEqual([sha256Hex('one')]);
    expect([...second.table.tokensByDigest.keys()]).toEqual([sha256Hex('two')]);
  });

  it('derives once per object while its other inputs stay the same (by identity), again when one changes', () => {
    const cache = new DerivedCache<number>();
    const o = {};
    const dep = {};
    let calls = 0;
    const compute = () => ++calls;
    expect(cache.get(o, [dep, 'd', false], compute)).toBe(1);
    expect(cache.get(o, [dep, 'd', false], compute)).toBe(1);
    expect(cache.get(o, [{}, 'd', false], compute)).toBe(2); // an equal but new dependency counts as changed
    expect(cache.get(o, [{}, 'd', true], compute)).toBe(3);
    expect(cache.get({}, [dep, 'd', false], compute)).toBe(4);
  });

  it('interns the served-model list: the same instance while its content is unchanged', () => {
    const a = internModels(['a', 'b']);
    expect(internModels(['a', 'b'])).toBe(a);
    expect(internModels(['a', 'b', 'c'])).not.toBe(a);
  });

  it('reuses unchanged tokens and groups between compiles, and follows a group or a route change', () => {
    const gv = 'modelgateway.io/v1alpha1';
    const route = (model: string): RawObject => ({
      apiVersion: gv,
      kind: 'ModelRoute',
      metadata: { name: model },
      spec: { backends: [{ name: 'b', baseURL: 'http://127.0.0.1:9/v1' }] },
    });
    const group: RawObject = { apiVersion: gv, kind: 'Group', metadata: { name: 'g' }, spec: { models: ['m-*'] } };
    const token = (name: string, key: string, spec: object = {}): RawObject => ({
      apiVersion: gv,
      kind: 'GatewayToken',
      metadata: { name },
      spec: { group: 'g', sha256: sha256Hex(key), ...spec },
    });
    const t1 = token('t1', 'one');
    const t2 = token('t2', 'two', { expiresAt: '2030-01-01T00:00:00Z' });
    const base = [route('m-1'), group, t1, t2];
    const first = compile(
      base.map((object) => ({ object })),
      { now: Date.parse('2029-01-01T00:00:00Z') },
    );
    const second = compile(
      base.map((object) => ({ object })),
      { now: Date.parse('2029-06-01T00:00:00Z') },
    );
    const tok = (r: typeof first, key: string) => r.table.tokensByDigest.get(sha256Hex(key))!;
    expect(tok(second, 'one')).toBe(tok(first, 'one'));
    expect(second.table.groups.get('default/g')).toBe(first.table.groups.get('default/g'));
    expect(second.statuses.find((s) => s.name === 't1')).toBe(first.statuses.find((s) => s.name === 't1'));
    // Time passing expires t2 even though no object changed.
    const third = compile(
      base.map((object) => ({ object })),
      { now: Date.parse('2031-01-01T00:00:00Z') },
    );
    expect(third.statuses.find((s) => s.name === 't2')!.conditions.at(-1)).toMatchObject({ type: 'Ready', status: 'False', reason: 'Expired' });
    // A new route the group's pattern matches: the group and every token in it see the new model.
    const fourth = compile(
      [...base, route('m-2')].map((object) => ({ object })),
      { now: Date.parse('2029-01-01T00:00:00Z') },
    );
    expect(fourth.table.groups.get('default/g')!.models).toEqual(['m-1', 'm-2']);
    expect([...tok(fourth, 'one').modelSet]).toEqual(['m-1', 'm-2']);
    expect(fourth.statuses.find((s) => s.name === 't1')!.conditions[1]!.message).toBe('group "g", 2 model(s)');
    // A changed token (a new object) is compiled again; its unchanged neighbour is not.
    const moved = token('t1', 'one', { models: ['m-2'] });
    const fifth = compile([route('m-1'), route('m-2'), group, moved, t2].map((object) => ({ object })));
    expect([...tok(fifth, 'one').modelSet]).toEqual(['m-2']);
    expect(tok(fifth, 'two')).toBe(tok(fourth, 'two'));
  });
});
