// Trace and span ids as 32-bit words (the id's bytes, four at a time, in the order its hex reads), made beside their
// hex: the API, the W3C header and the access log read the hex, the OTLP/protobuf encoder writes the words, so no
// span's hex is parsed back to bytes as it is exported. Random as the SDK's RandomIdGenerator: Math.random, never an
// all-zero (invalid) id.

/** Where the words sit in a span's list: the trace id's four, the span id's two, the parent span id's two. */
export const TRACE_WORDS = 0;
export const SPAN_WORDS = 4;
export const PARENT_WORDS = 6;

const scratch = Buffer.allocUnsafe(16);

/** Fills `count` words from `at` with random ones, and returns their hex. */
export function randomId(words: number[], at: number, count: number): string {
  let any = 0;
  for (let i = 0; i < count; i++) {
    const word = (Math.random() * 2 ** 32) | 0;
    words[at + i] = word;
    any |= word;
  }
  if (any === 0) words[at + count - 1] = 1;
  return hexOf(words, at, count);
}

export function hexOf(words: readonly number[], at: number, count: number): string {
  for (let i = 0; i < count; i++) scratch.writeInt32BE(words[at + i]!, i * 4);
  return scratch.toString('hex', 0, count * 4);
}

/** Reads a valid id's hex (lowercase or not) into `hex.length / 8` words from `at`. */
export function readHexId(hex: string, words: number[], at: number): void {
  for (let i = 0; i < hex.length / 8; i++) words[at + i] = Number.parseInt(hex.slice(i * 8, i * 8 + 8), 16) | 0;
}
