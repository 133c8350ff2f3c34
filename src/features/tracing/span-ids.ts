// Trace and span ids as 32-bit words (the id's bytes, four at a time, in the order its hex reads), made beside their
// hex: the API, the W3C header and the access log read the hex, the OTLP/protobuf encoder writes the words, so no
// span's hex is parsed back to bytes as it is exported. Random as the SDK's RandomIdGenerator: Math.random, never an
// all-zero (invalid) id. A span id's hex is made only when something reads it (OwnSpanContext): the protobuf export
// of a server span never does.
import type { SpanContext, TraceState } from '@opentelemetry/api';

/** Where the words sit in a span's list: the trace id's four, the span id's two, the parent span id's two. */
export const TRACE_WORDS = 0;
export const SPAN_WORDS = 4;
export const PARENT_WORDS = 6;

/** Fills `count` words from `at` with random ones, not all zero. */
export function randomWords(words: number[], at: number, count: number): void {
  let any = 0;
  for (let i = 0; i < count; i++) {
    const word = (Math.random() * 2 ** 32) | 0;
    words[at + i] = word;
    any |= word;
  }
  if (any === 0) words[at + count - 1] = 1;
}

/** Fills `count` words from `at` with random ones, and returns their hex. */
export function randomId(words: number[], at: number, count: number): string {
  randomWords(words, at, count);
  return hexOf(words, at, count);
}

// Lowercase hex digits' character codes. A string is made from its character codes in one call, flat: a Buffer's
// hex encoding was a call into C++ per id, and strings joined piece by piece were flattened again by their readers
// (the header, the log line).
const DIGITS = [0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66];
const DASH = 0x2d;
const fromCharCode = String.fromCharCode;
/** Character codes of ids of two and four words, and of a traceparent, filled and read at once. */
const CODES_16: number[] = new Array(16).fill(0);
const CODES_32: number[] = new Array(32).fill(0);
const CODES_55: number[] = new Array(55).fill(0x30);

/** Writes `count` words from `at` as hex digits into `codes` from `k`; returns where they end. */
function hexCodes(codes: number[], k: number, words: readonly number[], at: number, count: number): number {
  for (let i = at; i < at + count; i++) {
    const w = words[i]!;
    for (let shift = 28; shift >= 0; shift -= 4) codes[k++] = DIGITS[(w >>> shift) & 15]!;
  }
  return k;
}

/** The hex of an id of `count` words from `at`: two (a span id) or four (a trace id). */
export function hexOf(words: readonly number[], at: number, count: number): string {
  const codes = count === 2 ? CODES_16 : CODES_32;
  hexCodes(codes, 0, words, at, count);
  return fromCharCode.apply(null, codes);
}

/** Reads a valid id's hex (lowercase or not) into `hex.length / 8` words from `at`. */
export function readHexId(hex: string, words: number[], at: number): void {
  for (let i = 0; i < hex.length / 8; i++) words[at + i] = Number.parseInt(hex.slice(i * 8, i * 8 + 8), 16) | 0;
}

/** The SpanContext of a span the gateway made: its span id's hex from its words, when first read. */
export class OwnSpanContext implements SpanContext {
  readonly traceId: string;
  readonly traceFlags: number;
  readonly traceState: TraceState | undefined;
  readonly #words: readonly number[];
  #spanId: string | undefined;

  constructor(traceId: string, words: readonly number[], traceFlags: number, traceState: TraceState | undefined) {
    this.traceId = traceId;
    this.#words = words;
    this.traceFlags = traceFlags;
    this.traceState = traceState;
  }

  get spanId(): string {
    if (this.#spanId === undefined) this.#spanId = hexOf(this.#words, SPAN_WORDS, 2);
    return this.#spanId;
  }

  /** The W3C traceparent naming this span as the parent: `00-{trace id}-{span id}-{flags}`. */
  traceparent(): string {
    const codes = CODES_55;
    codes[2] = DASH;
    let k = hexCodes(codes, 3, this.#words, TRACE_WORDS, 4);
    codes[k++] = DASH;
    k = hexCodes(codes, k, this.#words, SPAN_WORDS, 2);
    codes[k++] = DASH;
    codes[k++] = 0x30;
    codes[k] = this.traceFlags & 1 ? 0x31 : 0x30;
    return fromCharCode.apply(null, codes);
  }
}
