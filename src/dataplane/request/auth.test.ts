import { describe, expect, it } from 'vitest';
import { compile } from '../../compile/compile.js';
import { sha256Hex } from '../../model/digest.js';
import type { RawObject } from '../../compile/resources.js';
import { authenticate } from './auth.js';
import { GatewayError } from '../../model/errors.js';

const v = 'modelgateway.io/v1alpha1';
const objects: RawObject[] = [
  { apiVersion: v, kind: 'Group', metadata: { name: 'g' }, spec: { models: [] } },
  { apiVersion: v, kind: 'GatewayToken', metadata: { name: 'ok' }, spec: { group: 'g', sha256: sha256Hex('good') } },
  { apiVersion: v, kind: 'GatewayToken', metadata: { name: 'old' }, spec: { group: 'g', sha256: sha256Hex('old'), expiresAt: '2030-01-01T00:00:00Z' } },
  { apiVersion: v, kind: 'GatewayToken', metadata: { name: 'off' }, spec: { group: 'g', sha256: sha256Hex('off'), disabled: true } },
];
const table = compile(objects.map((object) => ({ object }))).table;
const now = Date.parse('2029-06-01T00:00:00Z');

describe('authenticate', () => {
  it('accepts a known key (case-insensitive scheme, sha256-only token)', () => {
    expect(authenticate(table, 'Bearer good', now)).toMatchObject({ name: 'ok' });
    expect(authenticate(table, 'bearer good', now)).toMatchObject({ name: 'ok' });
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['wrong scheme', 'Basic good'],
    ['unknown', 'Bearer nope'],
    ['disabled', 'Bearer off'],
  ])('refuses %s', (_name, header) => {
    const r = authenticate(table, header, now);
    expect(r).toBeInstanceOf(GatewayError);
    expect((r as GatewayError).code).toBe('invalid_api_key');
  });

  it('takes the key from x-api-key when there is no Authorization header', () => {
    expect(authenticate(table, undefined, now, 'good')).toMatchObject({ name: 'ok' });
    expect(authenticate(table, undefined, now, 'nope')).toBeInstanceOf(GatewayError);
    expect(authenticate(table, undefined, now, '')).toBeInstanceOf(GatewayError);
    // Repeated headers arrive as an array: ambiguous, refused.
    expect(authenticate(table, undefined, now, ['good', 'good'])).toBeInstanceOf(GatewayError);
  });

  it('lets a present Authorization header decide, even a bad one beside a good x-api-key', () => {
    expect(authenticate(table, 'Bearer good', now, 'nope')).toMatchObject({ name: 'ok' });
    expect(authenticate(table, 'Bearer nope', now, 'good')).toBeInstanceOf(GatewayError);
    expect(authenticate(table, 'Basic good', now, 'good')).toBeInstanceOf(GatewayError);
  });

  it('checks expiry per request, not per compile', () => {
    expect(authenticate(table, 'Bearer old', now)).toMatchObject({ name: 'old' });
    expect(authenticate(table, 'Bearer old', Date.parse('2030-01-01T00:00:01Z'))).toBeInstanceOf(GatewayError);
  });
});
