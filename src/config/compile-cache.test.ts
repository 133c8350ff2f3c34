import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compile, sha256Hex } from './compile.js';
import { cachedKeyDigest, parsedURL, validateCached } from './compile-cache.js';
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
});
