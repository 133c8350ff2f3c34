// Usage estimates, for when the upstream reported none (the stream was cut, the upstream died, the provider
// omits usage): input tokens from the text the client sent, output tokens from the text relayed to it, both
// counted with a real tokenizer. Chat messages carry a few tokens of template each (OpenAI's published rule
// of thumb: 3 per message, 3 to prime the reply). Pure: this says what to count (the tokenizer runs in a worker
// thread, tokenizer.ts) and how to add it up.
import type { Family } from '../../model/families.js';

/** What an estimate counts: texts for the tokenizer, tokens known without it, and a factor for a sample. */
export interface Counting {
  readonly texts: readonly string[];
  readonly known: number;
  readonly scale: number;
}

/** The tokens of a Counting, given the tokenizer's count of each of its texts. */
export function tokensOf(c: Counting, counts: readonly number[]): number {
  let n = c.known;
  for (const k of counts) n += k;
  return Math.round(n * c.scale);
}

/**
 * The helpers below add up tokens as `n += count(text)`; `count` records the text for the tokenizer and adds 0,
 * so what they return is the part known without it (template tokens, pre-tokenized inputs).
 */
type Collect = (text: string) => number;

function counting(scale: number, fill: (count: Collect) => number): Counting {
  const texts: string[] = [];
  const known = fill((text) => {
    if (text.length > 0) texts.push(text);
    return 0;
  });
  return { texts, known, scale };
}

const NOTHING: Counting = { texts: [], known: 0, scale: 1 };

const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;
/**
 * Most text counted per estimate. A longer body or answer is counted from a sample of that size, scaled by its
 * length, so an estimate stays cheap however large the body (counting one whole takes time in proportion).
 */
export const SAMPLE_BYTES = 64 * 1024;

/** Input tokens of a JSON request body, by family; none for families whose input is not text the gateway reads. */
export function inputCounting(family: Family, body: Buffer | undefined): Counting {
  if (!body) return NOTHING;
  if (body.length > 2 * SAMPLE_BYTES) return { texts: [body.toString('utf8', 0, SAMPLE_BYTES)], known: 0, scale: body.length / SAMPLE_BYTES };
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return NOTHING;
  }
  return counting(1, (count) => inputTokens(family, json, count));
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
export function outputCounting(text: string, isStream: boolean, isJson: boolean, scale = 1): Counting {
  return counting(scale, (count) => outputTokens(text, isStream, isJson, count));
}

function outputTokens(text: string, isStream: boolean, isJson: boolean, count: Collect): number {
  if (isStream) {
    let n = 0;
    for (const data of dataLines(text)) {
      try {
        n += deltaTokens(JSON.parse(data), count);
      } catch {
        // [DONE], or an event cut short.
      }
    }
    return n;
  }
  if (!isJson) return count(text);
  try {
    return textTokens(JSON.parse(text), count, OUTPUT_TEXT);
  } catch {
    return count(text);
  }
}

/**
 * A chat chunk's `choices[].delta` text, a Responses or transcription event's `delta` string, or a Messages
 * event's `delta` object (its text, thinking or tool input).
 */
function deltaTokens(event: unknown, count: Collect): number {
  if (!event || typeof event !== 'object') return 0;
  const { delta, choices } = event as Record<string, unknown>;
  if (typeof delta === 'string') return count(delta);
  if (delta && typeof delta === 'object') return textTokens(delta, count, OUTPUT_TEXT);
  let n = 0;
  if (Array.isArray(choices)) for (const c of choices) n += textTokens((c as Record<string, unknown> | null)?.['delta'], count, OUTPUT_TEXT);
  return n;
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

function* dataLines(text: string): Generator<string> {
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line.startsWith('data:')) yield line.slice(line[5] === ' ' ? 6 : 5);
  }
}
