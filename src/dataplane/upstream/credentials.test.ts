import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CompiledBackend } from '../../model/routing-table.js';
import { compileCredentials, credentialsOf, maskHeaders, MIN_MASKED_SECRET_BYTES } from './credentials.js';
import { StreamReplacer } from '../stream/stream-replace.js';

const bearer = (key: string) => compileCredentials([{ header: 'authorization', value: `Bearer ${key}`, secret: key }]);
const mask = (c: ReturnType<typeof bearer>, s: string) => StreamReplacer.replaceAll(Buffer.from(s), c.needles).toString();

describe('credentials', () => {
  it('masks a key byte for byte, also as a JSON encoder escapes it', () => {
    const c = bearer('sk-a/b"c\\d');
    const json = JSON.stringify({ error: { message: 'Bad key sk-a/b"c\\d' } });
    const masked = mask(c, json);
    expect(masked.length).toBe(json.length);
    // In the JSON text the key reads sk-a/b\"c\\d (12 bytes): all of them are masked.
    expect(JSON.parse(masked).error.message).toBe(`Bad key ${'*'.repeat(12)}`);
    expect(mask(c, '{"k":"sk-a\\/b\\"c\\\\d"}')).toBe(`{"k":"${'*'.repeat(13)}"}`);
    expect(mask(c, 'sk-a/b"c\\d')).toBe('*'.repeat(10));
  });

  it(`masks a key shorter than ${MIN_MASKED_SECRET_BYTES} bytes only in the form it was sent in`, () => {
    const c = bearer('abc');
    expect(mask(c, 'abc is in every alphabet; Authorization: Bearer abc')).toBe('abc is in every alphabet; Authorization: **********');
    expect(mask(bearer('abcdefgh'), 'abcdefgh')).toBe('********');
  });

  it('sends and masks nothing for a backend without a key, and computes a backend’s once', () => {
    const none = { apiKey: undefined } as CompiledBackend;
    expect(credentialsOf(none)).toEqual({ sent: [], needles: [], texts: [] });
    const key = `sk-${randomBytes(8).toString('hex')}`;
    const backend = { apiKey: key } as CompiledBackend;
    expect(credentialsOf(backend)).toBe(credentialsOf(backend));
    expect(credentialsOf(backend).sent).toEqual([{ header: 'authorization', value: `Bearer ${key}`, secret: key }]);
  });

  it('masks header values in place', () => {
    const h = maskHeaders({ a: 'x sk-long-enough y', b: 3, c: ['sk-long-enough'] }, bearer('sk-long-enough').texts);
    expect(h).toEqual({ a: `x ${'*'.repeat(14)} y`, b: 3, c: ['*'.repeat(14)] });
  });
});
