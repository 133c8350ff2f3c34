import { describe, expect, it } from 'vitest';
import { JsonObjectScanner, MAX_DEPTH, scanJsonObject as scanWith, skipJsonSpace, WantedKeys, type ScanResult } from './json-scan.js';

const scanJsonObject = (bytes: Buffer, wanted: string[]) => scanWith(bytes, new WantedKeys(wanted));

/** What JSON.parse says of the same bytes, in the scanner's terms. */
function reference(bytes: Buffer): 'ok' | 'malformed' | 'not-an-object' {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return 'malformed';
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? 'ok' : 'not-an-object';
}

const verdict = (r: ScanResult) => (r.ok ? 'ok' : r.reason);

/** The same scan, `slice` bytes at a time: every state must survive a pause anywhere. */
function sliced(bytes: Buffer, wanted: string[], slice: number): ScanResult {
  const scanner = new JsonObjectScanner(bytes, new WantedKeys(wanted));
  for (;;) {
    const r = scanner.step(slice);
    if (r) return r;
  }
}

const VALID = [
  '{}',
  ' \t\r\n{ } \n',
  '{"a":1}',
  '{"a":-0,"b":0.5,"c":-12.25e+10,"d":1E-3,"e":0e0,"f":123456789012345678901234567890}',
  '{"a":true,"b":false,"c":null}',
  '{"a":[],"b":[[],[{}]],"c":{"d":{"e":[1,"x",null]}}}',
  '{"s":"caf\\u00e9 \\"q\\" \\\\ \\/ \\b\\f\\n\\r\\t","t":"\\uD83D\\uDE00","u":"\\ud800"}',
  '{"model":"gpt-4o-mini","model":"other"}',
  '{"":""}',
  '{"a" : [ 1 , 2 ] , "b" : { "c" : "d" } }',
  '{"non-ascii key é":"värde ✓ 録音"}',
];

const INVALID = [
  '',
  ' ',
  '{',
  '}',
  '{"a"}',
  '{"a":}',
  '{"a":1,}',
  '{,"a":1}',
  '{"a":1 "b":2}',
  '{"a":[1,]}',
  '{"a":[1 2]}',
  '{"a":[}',
  '{"a":{]}',
  '{a:1}',
  "{'a':1}",
  '{"a":01}',
  '{"a":1.}',
  '{"a":.5}',
  '{"a":+1}',
  '{"a":1e}',
  '{"a":1e+}',
  '{"a":-}',
  '{"a":--1}',
  '{"a":0x10}',
  '{"a":NaN}',
  '{"a":Infinity}',
  '{"a":tru}',
  '{"a":truex}',
  '{"a":nul}',
  '{"a":True}',
  '{"a":"\\x"}',
  '{"a":"\\u12"}',
  '{"a":"\\u12G4"}',
  '{"a":"tab\there"}',
  '{"a":"new\nline"}',
  '{"a":"unterminated}',
  '{"a":"x"}}',
  '{"a":1}{"b":2}',
  '{"a":1} x',
  '{"a":1}\u0000',
  '\uFEFF{"a":1}',
  '{"a":1}/* comment */',
  '{"a":\u00a01}',
];

const NOT_OBJECTS = ['null', '[]', '[{"model":"x"}]', '"str"', '12', '-0.5e3', 'true', ' 0 '];

describe('JsonObjectScanner agrees with JSON.parse', () => {
  it.each([...VALID, ...INVALID, ...NOT_OBJECTS])('%j', (text) => {
    const bytes = Buffer.from(text, 'utf8');
    const expected = reference(bytes);
    expect(verdict(scanJsonObject(bytes, ['a', 'model']))).toBe(expected);
    for (const slice of [1, 2, 3, 7]) expect(verdict(sliced(bytes, ['a', 'model'], slice))).toBe(expected);
  });

  it('bytes that are not UTF-8 inside strings are accepted (JSON.parse reads them as U+FFFD), outside refused', () => {
    const inside = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xc3]), Buffer.from('"}')]);
    const outside = Buffer.concat([Buffer.from('{"a":1'), Buffer.from([0xff]), Buffer.from('}')]);
    expect(verdict(scanJsonObject(inside, []))).toBe('ok');
    expect(verdict(scanJsonObject(outside, []))).toBe('malformed');
  });

  it('random documents, and random damage to them, get the same verdict', () => {
    let seed = 12345;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const ws = () => pick(['', '', ' ', '\n', '\t ', '\r\n']);
    const value = (depth: number): string => {
      const r = rand();
      if (depth > 4 || r < 0.3) return pick(['0', '-1', '3.25', '1e9', '-0.0E-2', 'true', 'false', 'null', '"s"', '"\\u00e9\\n"', '""', '"m\\"x"']);
      if (r < 0.65) return `[${ws()}${Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1)).join(`${ws()},${ws()}`)}${ws()}]`;
      return `{${ws()}${Array.from({ length: Math.floor(rand() * 4) }, () => `${pick(['"a"', '"model"', '"b\\u0061"', '""'])}${ws()}:${ws()}${value(depth + 1)}`).join(`,${ws()}`)}${ws()}}`;
    };
    const damage = (s: string): string => {
      const at = Math.floor(rand() * (s.length + 1));
      const op = rand();
      if (op < 0.33) return s.slice(0, at) + s.slice(at + 1);
      const ch = pick(['{', '}', '[', ']', ',', ':', '"', '\\', '0', '-', '.', 'e', 't', ' ', '\n', 'x', '\u0001']);
      return op < 0.66 ? s.slice(0, at) + ch + s.slice(at) : s.slice(0, at) + ch + s.slice(at + 1);
    };
    let checked = 0;
    for (let i = 0; i < 3_000; i++) {
      const doc = `${ws()}${rand() < 0.8 ? `{"model":${value(1)},"x":${value(1)}}` : value(0)}${ws()}`;
      for (const text of [doc, damage(doc), damage(damage(doc))]) {
        const bytes = Buffer.from(text, 'utf8');
        const expected = reference(bytes);
        expect(verdict(scanJsonObject(bytes, ['model'])), text).toBe(expected);
        expect(verdict(sliced(bytes, ['model'], 1 + (i % 5))), text).toBe(expected);
        checked++;
      }
    }
    expect(checked).toBe(9_000);
  });
});

describe('nesting', () => {
  const nested = (depth: number) => Buffer.from(`{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`);

  it(`up to ${MAX_DEPTH} levels is fine, one more is too deep, and a million costs no stack`, () => {
    expect(verdict(scanJsonObject(nested(MAX_DEPTH), []))).toBe('ok');
    expect(verdict(scanJsonObject(nested(MAX_DEPTH + 1), []))).toBe('too-deep');
    expect(verdict(scanJsonObject(nested(1_000_000), []))).toBe('too-deep');
  });
});

describe('top-level members', () => {
  it('records the wanted members with their byte ranges, nested keys of the same name ignored', () => {
    const text = '{ "model" : "gpt" , "messages":[{"model":"nested"}], "stream":true,"n":{"stream":false} }';
    const r = scanJsonObject(Buffer.from(text), ['model', 'stream']);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const ranges = r.object.members.map((m) => [m.key, text.slice(m.start, m.end), text.slice(m.valueStart, m.end)]);
    expect(ranges).toEqual([
      ['model', '"model" : "gpt"', '"gpt"'],
      ['stream', '"stream":true', 'true'],
    ]);
    expect(r.object.memberCount).toBe(4);
    expect(text[r.object.closeAt]).toBe('}');
    expect(r.object.closeAt).toBe(text.length - 1);
  });

  it('decodes escaped keys, keeps duplicates in order, and matches non-ASCII wanted keys', () => {
    const text = '{"mod\\u0065l":1,"model":[2],"modèl":{"x":3},"other":4}';
    const bytes = Buffer.from(text);
    const r = scanJsonObject(bytes, ['model', 'modèl']);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.object.members.map((m) => [m.key, m.escapedKey, bytes.toString('utf8', m.valueStart, m.end)])).toEqual([
      ['model', true, '1'],
      ['model', false, '[2]'],
      ['modèl', false, '{"x":3}'],
    ]);
  });

  it('a number as the last value of a member ends at the right byte', () => {
    const text = '{"a":12.5e3}';
    const r = scanJsonObject(Buffer.from(text), ['a']);
    expect(r.ok && text.slice(r.object.members[0]!.valueStart, r.object.members[0]!.end)).toBe('12.5e3');
  });
});

describe('skipJsonSpace', () => {
  it("skips JSON's four whitespace bytes and nothing else, and stops at the end", () => {
    const b = Buffer.from(' \t\r\n:\u00a0x \f');
    expect(skipJsonSpace(b, 0)).toBe(4);
    expect(skipJsonSpace(b, 4)).toBe(4);
    expect(skipJsonSpace(b, 5)).toBe(5); // U+00A0 is not JSON whitespace
    expect(skipJsonSpace(Buffer.from(' x  '), 2)).toBe(4);
    expect(skipJsonSpace(Buffer.from('\f'), 0)).toBe(0);
  });
});
