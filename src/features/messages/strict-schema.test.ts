import { describe, expect, it } from 'vitest';
import { strictCompatible } from './strict-schema.js';

const closed = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

describe('strictCompatible', () => {
  it('takes objects that require every property and allow no others, at every depth', () => {
    const schema = closed({
      city: { type: 'string' },
      stops: { type: 'array', items: closed({ name: { type: 'string' } }) },
      when: { anyOf: [{ type: 'null' }, { $ref: '#/$defs/date' }] },
    });
    expect(strictCompatible({ ...schema, $defs: { date: closed({ day: { type: 'integer' } }) } })).toBe(true);
  });

  it('refuses an optional property, open additional properties, or either one level down', () => {
    expect(strictCompatible(closed({ city: { type: 'string' }, note: { type: 'string' } }, ['city']))).toBe(false);
    expect(strictCompatible({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] })).toBe(false);
    expect(strictCompatible(closed({ list: { type: 'array', items: closed({ a: {}, b: {} }, ['a']) } }))).toBe(false);
    expect(strictCompatible(closed({ x: { anyOf: [{ type: 'object', properties: {} }] } }))).toBe(false);
    expect(strictCompatible({ ...closed({}), $defs: { d: closed({ a: {} }, []) } })).toBe(false);
  });
});
