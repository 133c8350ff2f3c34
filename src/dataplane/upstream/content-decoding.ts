// Upstream answers should arrive as identity: the gateway asks for it (accept-encoding: identity) because it
// reads bodies to seal ids, count tokens and mask credentials, and a compressed body would slip past all three.
// An upstream that compresses anyway (some proxies and CDNs ignore the header) is decoded here with node:zlib,
// as a stream with back-pressure: a small body that inflates to gigabytes (a decompression bomb) is never held
// in memory but flows to the client at the client's pace, like any large answer, and every read that buffers
// (the error retold as an SSE event) stops at its own limit of decoded bytes.
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';

export type BodyCoding =
  | { readonly kind: 'identity' }
  /** Content codings in the order the upstream applied them. */
  | { readonly kind: 'decodable'; readonly codings: readonly string[] }
  | { readonly kind: 'unsupported' };

const ZSTD = typeof zlib.createZstdDecompress === 'function';
/** zstd frames may ask for a window of up to 2^31 bytes; HTTP's zstd coding caps it at 8 MiB (RFC 9659). */
const ZSTD_WINDOW_LOG_MAX = 23;

const DECODERS: Readonly<Record<string, () => Transform>> = {
  // A truncated body ends where it ends instead of failing at the last byte (as browsers and undici's fetch
  // do); a cut connection is still reported by the upstream body itself.
  gzip: () => zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH }),
  'x-gzip': () => zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH }),
  deflate: () => zlib.createInflate({ finishFlush: zlib.constants.Z_SYNC_FLUSH }),
  br: () => zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH }),
  ...(ZSTD
    ? {
        zstd: () =>
          zlib.createZstdDecompress({
            finishFlush: zlib.constants.ZSTD_e_flush,
            params: { [zlib.constants.ZSTD_d_windowLogMax]: ZSTD_WINDOW_LOG_MAX },
          }),
      }
    : {}),
};

const IDENTITY: BodyCoding = { kind: 'identity' };

/** What the Content-Encoding header says about the body. */
export function bodyCoding(header: string | string[] | undefined): BodyCoding {
  if (header === undefined) return IDENTITY;
  const codings: string[] = [];
  for (const token of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const c = token.trim().toLowerCase();
    if (c === '' || c === 'identity') continue;
    if (!Object.hasOwn(DECODERS, c)) return { kind: 'unsupported' };
    codings.push(c);
  }
  return codings.length === 0 ? IDENTITY : { kind: 'decodable', codings };
}

/** The decoders for a decodable body, in the order its bytes must pass through them (the last coding applied first). */
export function decoders(codings: readonly string[]): Transform[] {
  return codings.toReversed().map((c) => DECODERS[c]!());
}
