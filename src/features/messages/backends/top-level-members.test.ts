import { describe, expect, it } from 'vitest';
import { TopLevelMembers } from './top-level-members.js';

const edit = (json: string, remove: string[], append: Record<string, string> = {}) =>
  TopLevelMembers.read(Buffer.from(json), [...remove, 'x'])!
    .edit(remove, append)
    .toString('utf8');

describe('top-level members spliced out of and into a JSON body', () => {
  const keys = ['a', 'b', 'c', 'd'];
  const spacings = [
    (k: string[]) => `{${k.map((x, i) => `"${x}":${i}`).join(',')}}`,
    (k: string[]) => `{ \n${k.map((x, i) => `  "${x}" : [${i}, {"${x}": 1}]`).join(' ,\n')}\n}`,
  ];
  const subsets = Array.from({ length: 1 << keys.length }, (_, mask) => keys.filter((_, i) => mask & (1 << i)));

  it.each(spacings.map((s, i) => [i, s] as const))('every subset of members removed (spacing %i) leaves valid JSON with the rest', (_, spacing) => {
    const json = spacing(keys);
    const whole = JSON.parse(json) as Record<string, unknown>;
    for (const gone of subsets) {
      const out = edit(json, gone, { z: '"added"' });
      const expected = Object.fromEntries(Object.entries(whole).filter(([k]) => !gone.includes(k)));
      expect(JSON.parse(out), `${gone.join()} removed from ${json}`).toEqual({ ...expected, z: 'added' });
      expect(JSON.parse(edit(json, gone)), `${gone.join()} removed, nothing added`).toEqual(expected);
    }
  });

  it('removes every duplicate of a key', () => {
    expect(JSON.parse(edit('{"model":"a","x":1,"model":"b"}', ['model']))).toEqual({ x: 1 });
    expect(JSON.parse(edit('{"model":"a","model":"b"}', ['model'], { v: '1' }))).toEqual({ v: 1 });
  });

  it('appends to an empty object, and leaves every other byte as the client wrote it', () => {
    expect(edit('{}', [], { v: '"x"' })).toBe('{"v":"x"}');
    expect(edit('{ }', ['model'], { v: '1' })).toBe('{ "v":1}');
    // Numbers beyond a double, escapes and spacing survive: nothing is re-serialised.
    const body = '{"model":"m", "n": 12345678901234567890, "s":"\\u00e9\\n", "sig":"EqQBCkYIARgCIkB…"}';
    expect(edit(body, ['model'])).toBe('{"n": 12345678901234567890, "s":"\\u00e9\\n", "sig":"EqQBCkYIARgCIkB…"}');
  });

  it('reads a member’s raw value, the last of duplicates', () => {
    const m = TopLevelMembers.read(Buffer.from('{"x":[1, 2],"x": ["b"]}'), ['x'])!;
    expect(m.text('x')).toBe('["b"]');
    expect(m.text('y')).toBeUndefined();
  });

  it('refuses what is not a JSON object', () => {
    for (const bad of ['[]', '"s"', '{"a":', '{"a":1}}', '']) expect(TopLevelMembers.read(Buffer.from(bad), ['a']), bad).toBeUndefined();
  });
});
