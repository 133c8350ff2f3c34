// Usage estimates, for when the upstream reported none (the stream was cut, the upstream died, the provider
// omits usage): input tokens from the text the client sent, output tokens from the text relayed to it, both
// counted by an approximation of o200k_base (token-count.ts: cheap enough to run on the serving thread, for a
// stream's CPU). Chat messages carry a few tokens of template each (OpenAI's published rule of thumb: 3 per
// message, 3 to prime the reply). Pure.
import type { Family } from '../../model/families.js';
import { tallyStreamText } from './stream-text.js';
import { TokenTally } from './token-count.js';

/**
 * The helpers below add up tokens as `n += count(text)`: `count` feeds the text to one tally for the whole estimate
 * (rounded once, at the end) and adds 0, so what they return is the part known without it (template tokens,
 * pre-tokenized inputs).
 */
type Collect = (text: string) => number;

function estimated(scale: number, fill: (count: Collect, tally: TokenTally) => number): number {
  const tally = new TokenTally();
  const known = fill((text) => {
    tally.text(text);
    tally.end();
    return 0;
  }, tally);
  return Math.round((known + tally.tokens()) * scale);
}

const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;
/**
 * Most text counted per estimate. A longer body or answer is counted from a sample of that size, scaled by its
 * length, so an estimate stays cheap however large the body (counting one whole takes time in proportion).
 */
export const SAMPLE_BYTES = 64 * 1024;

/** Input tokens of a JSON request body, by family; none for families whose input is not text the gateway reads. */
export function estimateInput(family: Family, body: Buffer | undefined): number {
  if (!body) return 0;
  if (body.length > 2 * SAMPLE_BYTES) return estimated(body.length / SAMPLE_BYTES, (count) => count(body.toString('utf8', 0, SAMPLE_BYTES)));
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return 0;
  }
  return estimated(1, (count) => inputTokens(family, json, count));
}

function inputTokens(family: Family, json: Record<string, unknown>, count: Collect): number {
  switch (family) {
    case 'chat.completions':
    case 'messages': {
      const messages = Array.isArray(json['messages']) ? json['messages'] : [];
      // A Messages request keeps its system prompt beside the messages (undefined for chat).
      let n = REPLY_PRIMING + tools(json, count) + textTokens(json['system'], count, INPUT_TEXT);
      for (const m of messages) n += PER_MESSAGE + textTokens(m, count, INPUT_TEXT);
      return n;
    }
    case 'responses':
      return textTokens(json['input'], count, INPUT_TEXT) + textTokens(json['instructions'], count, INPUT_TEXT) + tools(json, count);
    case 'embeddings':
      return embeddingInput(json['input'], count);
    case 'images.generations':
    case 'videos':
      return textTokens(json['prompt'], count, INPUT_TEXT);
    default:
      return 0;
  }
}

/**
 * Output tokens of what was relayed: for an event stream, the text of its deltas only (the `.done` and
 * `response.completed` events repeat it); for a JSON answer, the text of its messages; for any other text (a transcription in text, srt or vtt), all of it. An answer cut inside its
 * JSON cannot be parsed: its raw text is counted, an overestimate by its syntax.
 */
export function estimateOutput(text: string, isStream: boolean, isJson: boolean, scale = 1): number {
  return estimated(scale, (count, tally) => outputTokens(text, isStream, isJson, count, tally));
}

function outputTokens(text: string, isStream: boolean, isJson: boolean, count: Collect, tally: TokenTally): number {
  if (isStream) {
    // The deltas are pieces of one text: tallied as one, a word cut across two deltas is one word.
    tallyStreamText(text, tally);
    return 0;
  }
  if (!isJson) return count(text);
  try {
    return textTokens(JSON.parse(text), count, OUTPUT_TEXT);
  } catch {
    return count(text);
  }
}

/** Members whose strings are text sent or generated; anything else (ids, roles, finish reasons) is not. */
const OUTPUT_TEXT: ReadonlySet<string> = new Set(['content', 'text', 'arguments', 'refusal', 'reasoning_content', 'reasoning', 'thinking', 'partial_json']);
const INPUT_TEXT: ReadonlySet<string> = new Set([...OUTPUT_TEXT, 'input', 'prompt', 'instructions', 'name', 'output']);
/** Members never read: binary payloads and metadata. */
const SKIPPED = new Set(['b64_json', 'image_url', 'file_data', 'audio', 'logprobs', 'id', 'type', 'role', 'object', 'model', 'usage']);

/** Tokens of the text in a JSON value: strings that are, or are under, a member named in `members`, at any depth. */
function textTokens(value: unknown, count: Collect, members: ReadonlySet<string>, isText = true): number {
  if (typeof value === 'string') return isText ? count(value) : 0;
  if (Array.isArray(value)) {
    let n = 0;
    for (const v of value) n += textTokens(v, count, members, isText);
    return n;
  }
  if (value && typeof value === 'object') {
    let n = 0;
    for (const [k, v] of Object.entries(value)) {
      if (!SKIPPED.has(k)) n += textTokens(v, count, members, members.has(k));
    }
    return n;
  }
  return 0;
}

function tools(json: Record<string, unknown>, count: Collect): number {
  return Array.isArray(json['tools']) ? count(JSON.stringify(json['tools'])) : 0;
}

/** Embeddings take a string, strings, or pre-tokenized arrays (whose length is the count). */
function embeddingInput(input: unknown, count: Collect): number {
  if (typeof input === 'string') return count(input);
  if (!Array.isArray(input)) return 0;
  if (input.every((v) => typeof v === 'number')) return input.length;
  let n = 0;
  for (const v of input) n += embeddingInput(v, count);
  return n;
}
