import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CompiledBackend } from '../../model/routing-table.js';
import { compileCredentials, credentialsOf, maskHeaders, MIN_MASKED_SECRET_BYTES, withAdded } from './credentials.js';
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

  const backendWith = (b: Partial<CompiledBackend>) => ({ headers: [], query: [], auth: { kind: 'none' }, ...b }) as CompiledBackend;

  it('sends and masks nothing for a backend without a key, and computes a backend’s once', () => {
    expect(credentialsOf(backendWith({}))).toEqual({ sent: [], query: [], needles: [], texts: [] });
    const key = `sk-${randomBytes(8).toString('hex')}`;
    const backend = backendWith({ auth: { kind: 'bearer', key } });
    expect(credentialsOf(backend)).toBe(credentialsOf(backend));
    expect(credentialsOf(backend).sent).toEqual([{ header: 'authorization', value: `Bearer ${key}`, secret: key }]);
  });

  it('sends a key header and the backend’s headers, masking only those from Secrets', () => {
    const key = `k-${randomBytes(8).toString('hex')}`;
    const c = credentialsOf(
      backendWith({
        auth: { kind: 'header', header: 'x-api-key', key },
        headers: [
          { name: 'anthropic-version', value: '2023-06-01', secret: false },
          { name: 'openai-project', value: 'proj_secret_1234', secret: true },
        ],
      }),
    );
    expect(c.sent).toEqual([
      { header: 'anthropic-version', value: '2023-06-01', secret: undefined },
      { header: 'openai-project', value: 'proj_secret_1234', secret: 'proj_secret_1234' },
      { header: 'x-api-key', value: key, secret: key },
    ]);
    expect(mask(c, `version 2023-06-01, project proj_secret_1234, key ${key}`)).toBe(
      `version 2023-06-01, project ${'*'.repeat(16)}, key ${'*'.repeat(key.length)}`,
    );
  });

  it('masks a key sent as a query parameter as written and URL-encoded', () => {
    const key = 'AIza+key/with=chars';
    const c = credentialsOf(backendWith({ auth: { kind: 'query', param: 'key', key } }));
    expect(c.sent).toEqual([]);
    expect(mask(c, `url ?key=${encodeURIComponent(key)} raw ${key}`)).toBe(
      `url ?key=${'*'.repeat(encodeURIComponent(key).length)} raw ${'*'.repeat(key.length)}`,
    );
  });

  it('adds a token an identity sent to one attempt, reusing the masks while the token is the same', () => {
    const base = credentialsOf(backendWith({}));
    const one = withAdded(base, [{ header: 'authorization', value: 'Bearer ya29.token-one', secret: 'ya29.token-one' }]);
    expect(withAdded(base, [{ header: 'authorization', value: 'Bearer ya29.token-one', secret: 'ya29.token-one' }])).toBe(one);
    expect(mask(one, 'echo ya29.token-one')).toBe(`echo ${'*'.repeat(14)}`);
    const two = withAdded(base, [{ header: 'authorization', value: 'Bearer ya29.token-two', secret: 'ya29.token-two' }]);
    expect(mask(two, 'echo ya29.token-two')).toBe(`echo ${'*'.repeat(14)}`);
    expect(withAdded(base, [])).toBe(base);
  });

  it('masks header values in place', () => {
    const h = maskHeaders({ a: 'x sk-long-enough y', b: 3, c: ['sk-long-enough'] }, bearer('sk-long-enough').texts);
    expect(h).toEqual({ a: `x ${'*'.repeat(14)} y`, b: 3, c: ['*'.repeat(14)] });
  });
});
