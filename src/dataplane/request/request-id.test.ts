import { describe, expect, it } from 'vitest';
import { chooseRequestId } from './request-id.js';

describe('chooseRequestId', () => {
  it('keeps a sane id', () => {
    expect(chooseRequestId('abc-123_x.y:z')).toBe('abc-123_x.y:z');
    expect(chooseRequestId('a'.repeat(128))).toBe('a'.repeat(128));
  });
  it.each([[undefined], [''], ['a'.repeat(129)], ['with space'], ['new\nline'], [['a', 'b']]])('mints one for %j', (incoming) => {
    expect(chooseRequestId(incoming as string | string[] | undefined)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
