import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { ChunkSplice, FieldPaths, JsonFieldScanner, jsonFieldStream, MAX_CAPTURED_VALUE_BYTES } from './json-field-scan.js';

/** Replaces a watched string with its upper-cased value, so a test can see exactly which values were touched. */
const upper = (_field: number, literal: string) => JSON.stringify((JSON.parse(literal) as string).toUpperCase());

function scan(paths: FieldPaths, input: string | Buffer, cuts: number[] = []): string {
  const bytes = typeof input === 'string' ? Buffer.from(input) : input;
  const scanner = new JsonFieldScanner(paths, upper);
  const splice = new ChunkSplice();
  const out: Buffer[] = [];
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    const chunk = bytes.subarray(at, cut);
    splice.begin(chunk);
    scanner.scan(chunk, 0, chunk.length, splice);
    out.push(splice.finish());
    at = cut;
  }
  splice.begin(Buffer.alloc(0));
  scanner.reset(0, splice);
  out.push(splice.finish());
  return Buffer.concat(out).toString('utf8');
}

const TOP = new FieldPaths([['id'], ['previous_response_id']]);

describe('JsonFieldScanner', () => {
  const doc =
    '{ "object" : "response", "id"\t:\n"resp_a",  "output": [{"id": "msg_1", "content": [{"text": "\\"id\\": \\"resp_x\\" \\\\"}]}],' +
    ' "conversation": {"id": "conv_1"}, "meta": {"previous_response_id": "resp_n"}, "previous_response_id": null, "i\\u0064x": "resp_k",' +
    ' "\\u0069d2": 1, "n": -1.5e3, "t": true, "e": "", "previous_response_id": "resp_b" }';

  it('replaces the values of top-level fields only, keeping every other byte', () => {
    const want = doc.replace('"resp_a"', '"RESP_A"').replace('"resp_b"', '"RESP_B"');
    expect(scan(TOP, doc)).toBe(want);
  });

  it('gives the same output for a split at every byte boundary', () => {
    const want = scan(TOP, doc);
    for (let k = 1; k < doc.length; k++) expect(scan(TOP, doc, [k]), `cut at ${k}`).toBe(want);
    expect(
      scan(
        TOP,
        doc,
        Array.from({ length: doc.length - 1 }, (_, i) => i + 1),
      ),
    ).toBe(want);
  });

  it('matches keys written with escapes and values with escapes and non-ASCII', () => {
    expect(scan(TOP, '{"\\u0069d":"r\\u00e9sp_\\"q\\""}')).toBe(`{"\\u0069d":${JSON.stringify('résp_"q"'.toUpperCase())}}`);
    expect(scan(TOP, '{"id":"résp_ü"}')).toBe('{"id":"RÉSP_Ü"}');
  });

  it('follows nested paths, never through arrays', () => {
    const fields = new FieldPaths([['response', 'id']]);
    expect(scan(fields, '{"id":"a","response":{"x":[{"id":"b"}],"id":"c"},"list":[{"response":{"id":"d"}}]}')).toBe(
      '{"id":"a","response":{"x":[{"id":"b"}],"id":"C"},"list":[{"response":{"id":"d"}}]}',
    );
    expect(scan(TOP, '[{"id":"a"}]')).toBe('[{"id":"a"}]');
  });

  it('names the first keys a document must hold for a watched field to be in it', () => {
    const paths = new FieldPaths([['id'], ['previous_response_id'], ['response', 'id']]);
    expect(paths.firstKeys.map(String)).toEqual(['"id"', '"previous_response_id"', '"response"']);
    expect(() => new FieldPaths([['a"b']])).toThrow();
  });

  it('keeps going through malformed JSON and other text, changing at most the value after a watched key', () => {
    const cases: [string, string][] = [
      ['not json "id": "x"', 'not json "id": "x"'],
      ['}}]]{"id"', '}}]]{"id"'],
      ['{"id":', '{"id":'],
      ['<html>{"id":"a"</html>', '<html>{"id":"A"</html>'],
      ['{"id":"a" "b"}', '{"id":"A" "b"}'],
    ];
    for (const [text, want] of cases) expect(scan(TOP, text), text).toBe(want);
  });

  it('drops an unterminated value at the end of the document rather than send it unreplaced', () => {
    expect(scan(TOP, '{"object":"response","id":"resp_trunc')).toBe('{"object":"response","id":');
  });

  it('keeps its memory flat on deep nesting and long strings', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    expect(scan(TOP, deep)).toBe(deep);
    const long = `{"text":"${'\\n'.repeat(500_000)}","id":"resp_z"}`;
    expect(scan(TOP, long, [3, 1000, 999_999])).toBe(long.replace('"resp_z"', '"RESP_Z"'));
  });

  it('refuses to hold a value longer than the limit', () => {
    expect(() => scan(TOP, `{"id":"${'a'.repeat(MAX_CAPTURED_VALUE_BYTES + 10)}"}`, [10])).toThrow(/longer than/);
    // A long value nobody watches is no problem.
    const text = `{"other":"${'a'.repeat(MAX_CAPTURED_VALUE_BYTES * 4)}","id":"x"}`;
    expect(scan(TOP, text, [10, 20_000])).toBe(text.replace('"x"', '"X"'));
  });
});

describe('jsonFieldStream', () => {
  it('rewrites a 30 MB body as it streams', async () => {
    const body = Buffer.from(`{"id":"resp_big","output":[{"text":"${'y'.repeat(30 * 1024 * 1024)}"}],"previous_response_id":"resp_prev"}`);
    const chunks = Array.from({ length: Math.ceil(body.length / 65536) }, (_, i) => body.subarray(i * 65536, (i + 1) * 65536));
    const out = await buffer(Readable.from(chunks).pipe(jsonFieldStream(TOP, upper)));
    expect(out.length).toBe(body.length);
    expect(out.subarray(0, 20).toString()).toBe('{"id":"RESP_BIG","ou');
    const tail = '}],"previous_response_id":"RESP_PREV"}';
    expect(out.subarray(out.length - tail.length).toString()).toBe(tail);
  });
});
