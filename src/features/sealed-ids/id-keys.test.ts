import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeKey, generateIdKey, IdKeyError, loadIdKeys, parseIdKeys } from './id-keys.js';

const key = randomBytes(32);
const dir = mkdtempSync(join(tmpdir(), 'mg-idkeys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('id keys', () => {
  it('decodes hex, base64 and base64url, tagged or not', () => {
    expect(decodeKey(key.toString('hex'), 'k')).toEqual(key);
    expect(decodeKey(key.toString('base64'), 'k')).toEqual(key);
    expect(decodeKey(key.toString('base64url'), 'k')).toEqual(key);
    expect(decodeKey(`hex:${key.toString('hex')}`, 'k')).toEqual(key);
    expect(decodeKey(`base64:${key.toString('base64')}`, 'k')).toEqual(key);
  });

  it('refuses short or garbled keys without echoing them', () => {
    const short = randomBytes(16).toString('hex');
    let err: unknown;
    try {
      decodeKey(short, '--id-keys key #1');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(IdKeyError);
    expect(String(err)).toContain('16 bytes');
    expect(String(err)).not.toContain(short);
    expect(() => decodeKey('not a key!', 'k')).toThrow(IdKeyError);
    expect(() => decodeKey(`hex:zz${key.toString('hex')}`, 'k')).toThrow(IdKeyError);
  });

  it('parses a list in order: first signs', () => {
    const k2 = randomBytes(40);
    expect(parseIdKeys(`${key.toString('hex')}, ${k2.toString('base64')}`, 'env')).toEqual([key, k2]);
    expect(parseIdKeys(`# rotated 2026-11\n${k2.toString('base64')}\n\n${key.toString('hex')} # old\n`, 'file')).toEqual([k2, key]);
    expect(() => parseIdKeys(' , ', 'env')).toThrow(/no keys/);
  });

  it('loads from the flag, from a file, or reports none', async () => {
    expect(await loadIdKeys({ keys: key.toString('hex') })).toEqual({ keys: [key], source: 'keys' });
    const file = join(dir, 'keys');
    writeFileSync(file, `${key.toString('base64')}\n`);
    expect(await loadIdKeys({ keysFile: file })).toEqual({ keys: [key], source: 'file' });
    expect(await loadIdKeys({})).toEqual({ keys: [], source: 'none' });
    expect(await loadIdKeys({ keys: '  ', keysFile: '' })).toEqual({ keys: [], source: 'none' });
    expect(generateIdKey().length).toBe(32);
    expect(generateIdKey()).not.toEqual(generateIdKey());
  });

  it('refuses both sources at once and a missing file', async () => {
    await expect(loadIdKeys({ keys: key.toString('hex'), keysFile: '/x' })).rejects.toThrow(/not both/);
    await expect(loadIdKeys({ keysFile: join(dir, 'missing') })).rejects.toThrow(/ENOENT/);
  });
});
