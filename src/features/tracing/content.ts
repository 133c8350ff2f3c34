// The opt-in content of a trace (--trace-content): what the client asked and what the model answered, for
// gen_ai.input.messages, gen_ai.system_instructions and gen_ai.output.messages, in the GenAI conventions' JSON
// schema (messages of typed parts; content-conversions.ts turns the OpenAI shapes into it, anthropic-content.ts
// Anthropic's Messages API). Pure and bounded: each
// value is JSON text of at most CONTENT_CHARS, its longest contents cut first so that it stays valid JSON, and the
// backend's credentials are masked before anything is cut (the answer is read before the relay masks it).
import { type SseLineReader, SseSplitter } from '../../dataplane/stream/sse.js';
import { anthropicAnswer, anthropicInput } from './anthropic-content.js';
import { chatAnswer, inputMessages, responsesAnswer, StreamedAnswer } from './content-conversions.js';
import type { Message, Part } from './content-parts.js';

export const CONTENT_CHARS = 16 * 1024;
/** Bytes of a JSON answer kept for parsing: enough for CONTENT_CHARS of content in its envelope. */
const ANSWER_BYTES = 4 * CONTENT_CHARS;
const TRUNCATED = '…[truncated]';

/** A request's recorded content: its messages and, when the API takes them apart, its system instructions. */
export interface InputContent {
  readonly messages: string | undefined;
  readonly systemInstructions: string | undefined;
}

/**
 * The content of a JSON request body, masked: Chat Completions `messages`, Responses `input` and `instructions`, or
 * (`anthropic`: the body is the Messages API's, as a native backend gets it) Anthropic's `messages` and `system`.
 */
export function inputContent(body: Buffer, mask: readonly string[], anthropic = false): InputContent | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const input = anthropic ? anthropicInput(doc) : inputMessages(doc);
  if (input === undefined) return undefined;
  return {
    messages: input.messages.length > 0 ? fitted(masked(input.messages, mask)) : undefined,
    systemInstructions: input.system.length > 0 ? fittedParts(masked(input.system, mask)) : undefined,
  };
}

/** Collects an answer's content chunk by chunk: a JSON body (bounded), or the data lines of a stream. */
export class OutputCollector implements SseLineReader {
  readonly #stream: StreamedAnswer | undefined;
  readonly #lines = new SseSplitter();
  #json: Buffer[] = [];
  #jsonBytes = 0;
  /** The pieces of the line being read. */
  #line: Buffer[] = [];
  #lineBytes = 0;
  /** A line longer than ANSWER_BYTES is skipped to its end. */
  #skipping = false;

  constructor(stream: boolean) {
    this.#stream = stream ? new StreamedAnswer(CONTENT_CHARS) : undefined;
  }

  push(chunk: Buffer): void {
    if (this.#stream) return this.#lines.push(chunk, this);
    if (this.#jsonBytes < ANSWER_BYTES) {
      this.#json.push(chunk);
      this.#jsonBytes += chunk.length;
    }
  }

  lineBytes(chunk: Buffer, from: number, to: number): void {
    if (this.#skipping) return;
    this.#lineBytes += to - from;
    if (this.#lineBytes > ANSWER_BYTES) {
      this.#skipping = true;
      this.#line = [];
      return;
    }
    this.#line.push(chunk.subarray(from, to));
  }

  lineEnd(): void {
    const parts = this.#line;
    const skipped = this.#skipping;
    this.#line = [];
    this.#lineBytes = 0;
    this.#skipping = false;
    if (skipped || parts.length === 0) return;
    // Decoded whole: a character split across chunks is read as it was sent.
    const line = (parts.length === 1 ? parts[0]! : Buffer.concat(parts)).toString('utf8');
    if (!line.startsWith('data:')) return;
    const data = line.slice(5).trim();
    if (data !== '' && data !== '[DONE]') this.#stream!.event(data);
  }

  /** gen_ai.output.messages, masked; undefined when the answer had none the gateway can read. */
  text(mask: readonly string[]): string | undefined {
    let messages: Message[] | undefined;
    if (this.#stream) messages = this.#stream.messages();
    else {
      try {
        const doc = JSON.parse(Buffer.concat(this.#json).toString('utf8')) as Record<string, unknown>;
        messages = chatAnswer(doc) ?? responsesAnswer(doc) ?? anthropicAnswer(doc);
      } catch {
        messages = undefined; // cut at ANSWER_BYTES, or not JSON
      }
    }
    return messages === undefined || messages.length === 0 ? undefined : fitted(masked(messages, mask));
  }
}

/** A copy with every string (at any depth) masked: before any cut, so that no part of a secret is left. */
function masked<T>(value: T, mask: readonly string[]): T {
  if (mask.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return maskText(v, mask);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}

function maskText(text: string, mask: readonly string[]): string {
  let out = text;
  for (const m of mask) if (out.includes(m)) out = out.replaceAll(m, '*'.repeat(m.length));
  return out;
}

/** Members of a part that hold content, the ones cut to fit (never its type, id or name). */
const CONTENT_MEMBERS = ['content', 'arguments', 'response', 'uri'];

/**
 * Messages as JSON text of at most CONTENT_CHARS: whole when they fit; else each content string is cut to the
 * longest length that fits (found by bisection); when even empty contents do not fit, only the first messages
 * (and of a lone message, its first parts) that fit are kept.
 */
function fitted(messages: readonly Message[]): string {
  const cutAll = (ms: readonly Message[], cap: number) => ms.map((m) => capMessage(m, cap));
  const text = cutToFit(messages, cutAll);
  if (text !== undefined) return text;
  const keep = prefixFitting(messages.map((m) => JSON.stringify(capMessage(m, 0)).length + 1));
  if (keep > 0) return cutToFit(messages.slice(0, keep), cutAll) ?? '[]';
  const first = messages[0]!;
  const frame = JSON.stringify({ ...first, parts: [] }).length + 2;
  const parts = prefixFitting(
    first.parts.map((p) => JSON.stringify(capPart(p, 0)).length + 1),
    CONTENT_CHARS - frame,
  );
  return parts > 0 ? (cutToFit([{ ...first, parts: first.parts.slice(0, parts) }], cutAll) ?? '[]') : '[]';
}

function fittedParts(parts: readonly Part[]): string {
  const cutAll = (ps: readonly Part[], cap: number) => ps.map((p) => capPart(p, cap));
  const text = cutToFit(parts, cutAll);
  if (text !== undefined) return text;
  const keep = prefixFitting(parts.map((p) => JSON.stringify(capPart(p, 0)).length + 1));
  return keep > 0 ? (cutToFit(parts.slice(0, keep), cutAll) ?? '[]') : '[]';
}

/** How many of the first items fit in `budget` characters of a JSON array, given each one's size with its comma. */
function prefixFitting(sizes: readonly number[], budget = CONTENT_CHARS): number {
  let total = 2;
  let n = 0;
  while (n < sizes.length && total + sizes[n]! <= budget) total += sizes[n++]!;
  return n;
}

function capMessage(m: Message, cap: number): Message {
  return { ...m, parts: m.parts.map((p) => capPart(p, cap)) };
}

/** JSON of `value` with its contents cut at the largest cap that fits in CONTENT_CHARS, or undefined when none does. */
function cutToFit<T>(value: T, cut: (value: T, cap: number) => unknown): string | undefined {
  const whole = JSON.stringify(value);
  if (whole.length <= CONTENT_CHARS) return whole;
  let best = JSON.stringify(cut(value, 0));
  if (best.length > CONTENT_CHARS) return undefined;
  let lo = 0;
  let hi = CONTENT_CHARS;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const text = JSON.stringify(cut(value, mid));
    if (text.length <= CONTENT_CHARS) {
      lo = mid;
      best = text;
    } else hi = mid - 1;
  }
  return best;
}

function capPart(part: Part, cap: number): Part {
  const out: Record<string, unknown> = { ...part };
  for (const k of CONTENT_MEMBERS) if (k in out) out[k] = capValue(out[k], cap);
  return out as Part;
}

function capValue(v: unknown, cap: number): unknown {
  if (typeof v === 'string') return v.length > cap ? v.slice(0, cap) + TRUNCATED : v;
  if (Array.isArray(v)) return v.map((x) => capValue(x, cap));
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, capValue(x, cap)]));
  return v;
}
