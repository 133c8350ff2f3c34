// Reads what the upstream reported from the end of an answer. OpenAI-shaped bodies put `usage` last (chat and
// embeddings JSON, the final chat chunk, response.completed / .incomplete / .failed, transcript.text.done), so
// the body's tail holds it: the last `"usage": {…}` object in the tail is cut out by matching its braces and
// parsed alone, never the whole body. Read from the bytes, not from a decoded string: every byte the search looks
// at is ASCII, which UTF-8 never uses inside a multi-byte character, and a character loop over a string costs far
// more in V8 (a generic property load per character). Pure.
import { lastKeyAt, QuotedKey } from '../../dataplane/stream/json-key-search.js';
import { skipJsonSpace } from '../../dataplane/request/json-scan.js';
import type { Usage } from '../../model/usage.js';

/** The counts an upstream reported; each undefined where the usage object does not say. */
export interface Reported {
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly cachedInputTokens?: number;
  readonly cacheWriteInputTokens?: number;
  readonly reasoningTokens?: number;
  readonly imageInputTokens?: number;
  readonly imageOutputTokens?: number;
  readonly audioInputTokens?: number;
  readonly audioOutputTokens?: number;
  readonly seconds?: number;
}

const USAGE = new QuotedKey('usage');
const OPEN = 0x7b;
const CLOSE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/** The last non-null `usage` object in the bytes of a JSON or SSE text (UTF-8), parsed; undefined when there is none. */
export function lastUsageObject(bytes: Buffer): Record<string, unknown> | undefined {
  for (let at = lastKeyAt(bytes, USAGE, bytes.length); at >= 0; at = lastKeyAt(bytes, USAGE, at - 1)) {
    if (at > 0 && bytes[at - 1] === BACKSLASH) continue; // inside a string: \"usage\"
    let i = skipJsonSpace(bytes, at + USAGE.bytes.length);
    if (bytes[i] !== COLON) continue;
    i = skipJsonSpace(bytes, i + 1);
    if (bytes[i] !== OPEN) continue;
    const end = objectEnd(bytes, i);
    if (end < 0) continue;
    try {
      const value: unknown = JSON.parse(bytes.toString('utf8', i, end));
      if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // Not JSON after all (cut, or text that only looks like it): look further back.
    }
  }
  return undefined;
}

/**
 * The counts of a usage object in any family's shape: chat and embeddings (`prompt_tokens`, `completion_tokens`,
 * `*_tokens_details`), Responses, images and transcriptions (`input_tokens`, `output_tokens`), and the duration
 * form of transcriptions (`{"type":"duration","seconds":…}`).
 */
export function reportedCounts(usage: Record<string, unknown>): Reported {
  const input = usage['prompt_tokens'] ?? usage['input_tokens'];
  const output = usage['completion_tokens'] ?? usage['output_tokens'];
  // input_token_details (singular): a token-billed transcription's.
  const inputDetails = objectOr(usage['prompt_tokens_details'] ?? usage['input_tokens_details'] ?? usage['input_token_details']);
  const outputDetails = objectOr(usage['completion_tokens_details'] ?? usage['output_tokens_details']);
  const outputTokens = count(output);
  const imageInputTokens = count(inputDetails?.['image_tokens']);
  // Only the Images API splits input into image_tokens, and its output tokens are the image made unless it says
  // otherwise (output_tokens_details, on newer image models).
  const imageOutputTokens = count(outputDetails?.['image_tokens']) ?? (imageInputTokens !== undefined ? outputTokens : undefined);
  // Every key present, undefined where unsaid: one object shape for all answers (deleting keys made each a
  // dictionary, per request).
  return {
    inputTokens: count(input),
    outputTokens,
    cachedInputTokens: count(inputDetails?.['cached_tokens']),
    // In OpenAI's chat and Responses types (input written to the prompt cache), and in chat-claude's completion.
    cacheWriteInputTokens: count(inputDetails?.['cache_write_tokens']),
    reasoningTokens: count(outputDetails?.['reasoning_tokens']),
    imageInputTokens,
    imageOutputTokens,
    audioInputTokens: count(inputDetails?.['audio_tokens']),
    audioOutputTokens: count(outputDetails?.['audio_tokens']),
    seconds: seconds(usage['seconds']),
  };
}

/** True when the report holds no count at all. */
export function isEmpty(r: Reported): boolean {
  return r.inputTokens === undefined && r.outputTokens === undefined && r.seconds === undefined;
}

/** A report completed to a Usage: missing token counts are 0; no part exceeds its total; image and audio parts only when some. */
export function toUsage(r: Reported, estimated: boolean): Usage {
  const inputTokens = r.inputTokens ?? 0;
  const outputTokens = r.outputTokens ?? 0;
  const cachedInputTokens = Math.min(r.cachedInputTokens ?? 0, inputTokens);
  return {
    inputTokens,
    outputTokens,
    cachedInputTokens,
    ...(r.cacheWriteInputTokens ? { cacheWriteInputTokens: Math.min(r.cacheWriteInputTokens, inputTokens - cachedInputTokens) } : {}),
    reasoningTokens: Math.min(r.reasoningTokens ?? 0, outputTokens),
    ...(r.imageInputTokens ? { imageInputTokens: Math.min(r.imageInputTokens, inputTokens) } : {}),
    ...(r.imageOutputTokens ? { imageOutputTokens: Math.min(r.imageOutputTokens, outputTokens) } : {}),
    ...(r.audioInputTokens ? { audioInputTokens: Math.min(r.audioInputTokens, inputTokens) } : {}),
    ...(r.audioOutputTokens ? { audioOutputTokens: Math.min(r.audioOutputTokens, outputTokens) } : {}),
    ...(r.seconds !== undefined ? { seconds: r.seconds } : {}),
    estimated,
  };
}

const SECONDS = /"(?:seconds|duration)"\s*:\s*"?(\d{1,9}(?:\.\d{1,9})?)"?/g;

/**
 * Length in seconds named in a JSON answer's text: a video's `seconds` ("8", as the API writes it), a transcription's
 * `usage.seconds`, or a verbose transcription's `duration` (which OpenAI writes first, before the text and segments:
 * a long answer's head holds it, not its tail). The last one wins.
 */
export function lastSeconds(text: string): number | undefined {
  let found: string | undefined;
  for (const m of text.matchAll(SECONDS)) found = m[1];
  return found === undefined ? undefined : seconds(found);
}

function objectOr(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
}

/**
 * A count as a non-negative safe integer, else undefined. The digits come from the upstream: 400 of them make
 * Infinity, which prom-client refuses by throwing.
 */
function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

function seconds(v: unknown): number | undefined {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 && n < 1e9 ? n : undefined;
}

/** Index past the object that opens at `from`, following strings; -1 when the bytes end first. */
function objectEnd(bytes: Uint8Array, from: number): number {
  let depth = 0;
  let inString = false;
  for (let i = from; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN) depth++;
    else if (c === CLOSE && --depth === 0) return i + 1;
  }
  return -1;
}
