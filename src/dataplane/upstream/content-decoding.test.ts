import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { bodyCoding, decoders } from './content-decoding.js';

const decode = async (bytes: Buffer, codings: readonly string[]) => {
  const stages = decoders(codings);
  const [out] = await Promise.all([buffer(stages[stages.length - 1]!), pipeline([Readable.from([bytes]), ...stages])]);
  return out.toString();
};

describe('bodyCoding', () => {
  it('reads Content-Encoding', () => {
    expect(bodyCoding(undefined)).toEqual({ kind: 'identity' });
    expect(bodyCoding('identity')).toEqual({ kind: 'identity' });
    expect(bodyCoding('GZIP')).toEqual({ kind: 'decodable', codings: ['gzip'] });
    expect(bodyCoding('deflate, br')).toEqual({ kind: 'decodable', codings: ['deflate', 'br'] });
    expect(bodyCoding(['x-gzip', 'zstd'])).toEqual({ kind: 'decodable', codings: ['x-gzip', 'zstd'] });
    expect(bodyCoding('compress')).toEqual({ kind: 'unsupported' });
    expect(bodyCoding('gzip, sdch')).toEqual({ kind: 'unsupported' });
    expect(bodyCoding('constructor')).toEqual({ kind: 'unsupported' });
  });
});

describe('decoders', () => {
  const text = '{"id":"resp_1"}'.repeat(100);

  it('decode gzip, deflate, br and zstd, and several codings in the reverse order of their application', async () => {
    expect(await decode(zlib.gzipSync(text), ['gzip'])).toBe(text);
    expect(await decode(zlib.deflateSync(text), ['deflate'])).toBe(text);
    expect(await decode(zlib.brotliCompressSync(text), ['br'])).toBe(text);
    expect(await decode(zlib.zstdCompressSync(text), ['zstd'])).toBe(text);
    expect(await decode(zlib.brotliCompressSync(zlib.gzipSync(text)), ['gzip', 'br'])).toBe(text);
  });

  it('refuse a zstd window beyond the 8 MiB HTTP allows', async () => {
    // Streamed (size unknown), so the frame keeps the 128 MiB window it asks for.
    const c = zlib.createZstdCompress({ params: { [zlib.constants.ZSTD_c_windowLog]: 27 } });
    const big = buffer(c);
    c.end(Buffer.alloc(1 << 20, 1));
    await expect(decode(await big, ['zstd'])).rejects.toThrow(/too much memory/);
  });
});
