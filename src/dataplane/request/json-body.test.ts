import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../model/errors.js';
import { readJsonBody, SCAN_SLICE_BYTES } from './json-body.js';
import { scanJsonObject, WantedKeys } from './json-scan.js';

const read = async (text: string, wanted = ['model', 'stream', 'p']) => readJsonBody(Buffer.from(text, 'utf8'), new WantedKeys(wanted));

/** How often each wanted key appears at the top level of `bytes`, and whether each is written plainly. */
function topLevel(bytes: Buffer, keys: string[]): Record<string, { count: number; escaped: boolean }> {
  const r = scanJsonObject(bytes, new WantedKeys(keys));
  if (!r.ok) throw new Error(`not a JSON object: ${r.reason}`);
  const out: Record<string, { count: number; escaped: boolean }> = {};
  for (const m of r.object.members) out[m.key] = { count: (out[m.key]?.count ?? 0) + 1, escaped: (out[m.key]?.escaped ?? false) || m.escapedKey };
  return out;
}

describe('reading members', () => {
  it('string, literal true, last of duplicates', async () => {
    const body = await read('{"model":"a","stream":true,"model":"b","p":{"x":1}}');
    expect(body.string('model')).toBe('b');
    expect(body.isTrue('stream')).toBe(true);
    expect(body.string('p')).toBeUndefined();
    expect(body.isPlain('model')).toBe(false);
    expect(body.isPlain('stream')).toBe(true);
    expect(body.isPlain('absent')).toBe(false);
    const other = await read('{"model":"caf\\u00e9","stream":"true"}');
    expect(other.string('model')).toBe('café');
    expect(other.isTrue('stream')).toBe(false);
  });
});

describe('integer', () => {
  it('reads a non-negative safe integer literal, the last of duplicates, and nothing else', async () => {
    const body = await read('{"m":5,"m":4096,"f":1.5,"n":-3,"s":"7","e":1e3,"big":123456789012345678,"z":0}', ['m', 'f', 'n', 's', 'e', 'big', 'z']);
    expect(body.integer('m')).toBe(4096);
    expect(body.integer('z')).toBe(0);
    for (const k of ['f', 'n', 's', 'e', 'big', 'absent']) expect(body.integer(k), k).toBeUndefined();
  });
});

describe('ambiguousMembers', () => {
  it('names each read member that is duplicated or escaped, with the value read (the last)', async () => {
    const body = await read('{"model":"a","stream":true,"p":"x","mod\\u0065l":"b","p":null,"other":1,"other":2}');
    expect(body.ambiguousMembers()).toEqual({ model: '"b"', p: 'null' });
    expect((await read('{"model":"a","stream":false}')).ambiguousMembers()).toBeUndefined();
  });
});

describe('with(): splicing members into the client’s bytes', () => {
  it('replaces a value and keeps every other byte, numbers JSON.parse would round included', async () => {
    const text = '{"model":"gpt-4o-mini",  "seed":12345678901234567890, "messages":[{"model":"nested"}]}';
    const out = (await read(text)).with({ model: '"upstream"' }).toString('utf8');
    expect(out).toBe('{"model":"upstream",  "seed":12345678901234567890, "messages":[{"model":"nested"}]}');
  });

  it('collapses duplicates to one plainly written member where the last one was', async () => {
    const out = (await read('{"mod\\u0065l":"x", "a":1 ,\n"model":"y","b":2}')).with({ model: '"z"' });
    expect(out.toString('utf8')).toBe('{"a":1 ,\n"model":"z","b":2}');
    expect(topLevel(out, ['model'])).toEqual({ model: { count: 1, escaped: false } });
  });

  it('adds absent members at the end', async () => {
    expect((await read('{}')).with({ p: '"r"', model: '"m"' }).toString()).toBe('{"p":"r","model":"m"}');
    expect((await read('{ "a":1 }')).with({ p: '"r"' }).toString()).toBe('{ "a":1 ,"p":"r"}');
  });

  it('random objects with duplicates: the result is the object with the members set, each once', async () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    for (let i = 0; i < 500; i++) {
      const n = 1 + Math.floor(rand() * 6);
      const members = Array.from(
        { length: n },
        () =>
          `${pick(['"model"', '"p"', '"mod\\u0065l"', '"a"', '"b"'])}${pick(['', ' '])}:${pick(['', '\n'])}${pick(['1', '"v"', '[1,{"model":2}]', '{"p":3}', 'null'])}${pick(['', ' '])}`,
      );
      const text = `{${members.join(pick([',', ' , ', ',\n']))}}`;
      const input = await read(text);
      const set = pick([{ model: '"M"' }, { p: '{"q":[1]}' }, { model: '"M"', p: 'false' }]) as Record<string, string>;
      const out = input.with(set);
      const expected = { ...JSON.parse(text), ...Object.fromEntries(Object.entries(set).map(([k, v]) => [k, JSON.parse(v)])) };
      expect(JSON.parse(out.toString('utf8')), text).toEqual(expected);
      for (const [key, info] of Object.entries(topLevel(out, Object.keys(set)))) expect(info, `${key} in ${out}`).toEqual({ count: 1, escaped: false });
    }
  });
});

describe('readJsonBody', () => {
  it.each([
    ['{"a":', 'invalid_json', /not valid JSON/],
    ['[1]', 'invalid_json', /must be a JSON object/],
    [`{"a":${'['.repeat(600)}${']'.repeat(600)}}`, 'invalid_json', /nested too deeply \(more than 512 levels\)/],
  ])('%s → 400 %s', async (text, code, message) => {
    const err = await read(text).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(400);
    expect((err as GatewayError).code).toBe(code);
    expect((err as GatewayError).message).toMatch(message);
  });

  it('a large body is scanned in slices, letting other work run in between', async () => {
    const big = Buffer.from(JSON.stringify({ model: 'm', pad: Array.from({ length: 200_000 }, (_, i) => ({ k: i })) }));
    expect(big.length).toBeGreaterThan(8 * SCAN_SLICE_BYTES);
    let turns = 0;
    let reading = true;
    const tick = () => {
      turns++;
      if (reading) setImmediate(tick);
    };
    setImmediate(tick);
    const body = await readJsonBody(big, new WantedKeys(['model']));
    reading = false;
    expect(body.string('model')).toBe('m');
    expect(turns).toBeGreaterThanOrEqual(Math.floor(big.length / SCAN_SLICE_BYTES) - 1);
  });

  it('a small body is scanned in one go', async () => {
    let turns = 0;
    setImmediate(() => turns++);
    await read('{"model":"m"}');
    expect(turns).toBe(0);
  });
});
