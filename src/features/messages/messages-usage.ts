// Usage from a backend that speaks the Messages API natively: from a whole answer's `usage`, or from a stream's
// message_start and message_delta events (message_delta's counts are running totals that replace earlier ones,
// as the SDK reads them), and what a Messages request reserves for the limits. Pure.
import { skipJsonSpace } from '../../dataplane/request/json-scan.js';
import { lastKeyAt, QuotedKey } from '../../dataplane/stream/json-key-search.js';
import type { ServerToolCalls, Usage } from '../../model/usage.js';

const USAGE = new QuotedKey('usage');
const OPEN = 0x7b;
const CLOSE = 0x7d;
const COLON = 0x3a;
const BACKSLASH = 0x5c;

/** The Usage of a non-streamed Messages answer, from its bytes (UTF-8); undefined when it carries no usage. */
export function messagesAnswerUsage(answer: Buffer): Usage | undefined {
  return messageUsage(answerUsageObject(answer));
}

/** The Usage of a whole Messages answer's `usage` object; undefined for none. */
export function messageUsage(usage: unknown): Usage | undefined {
  if (!usage) return undefined;
  // A whole answer's usage is what a stream's message_start would carry.
  const counts = new NativeStreamUsage();
  counts.observe({ type: 'message_start', message: { usage } });
  return counts.usage();
}

/**
 * The top-level `usage` member of a whole answer, as JSON.parse of the answer reads it. Anthropic writes it last:
 * then it is parsed alone, found from the end (as chat's usage is read from its answer's tail), at less than half
 * the cost of parsing the whole answer. Any other answer is parsed whole. An answer that is not JSON has no usage,
 * unless it ends with a `usage` member that is.
 */
function answerUsageObject(bytes: Buffer): unknown {
  const last = lastNonSpace(bytes);
  const at = bytes[last] === CLOSE ? lastKeyAt(bytes, USAGE, last) : -1;
  // A quote after a backslash is inside a string: not a key.
  if (at > 0 && bytes[at - 1] !== BACKSLASH) {
    const colon = skipJsonSpace(bytes, at + USAGE.bytes.length);
    const value = skipJsonSpace(bytes, colon + 1);
    // From the value to the answer's closing brace is one JSON object only when `usage` is the answer's last member.
    if (bytes[colon] === COLON && bytes[value] === OPEN) {
      try {
        return JSON.parse(bytes.toString('utf8', value, last));
      } catch {
        // Not the last member (or not JSON): the whole answer decides.
      }
    }
  }
  try {
    return field(JSON.parse(bytes.toString('utf8')), 'usage');
  } catch {
    return undefined;
  }
}

/** The index of the last byte that is not JSON whitespace; -1 when there is none. */
function lastNonSpace(bytes: Buffer): number {
  let i = bytes.length - 1;
  while (i >= 0 && (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)) i--;
  return i;
}

/** Counts a native Messages stream's usage, one parsed event at a time. */
export class NativeStreamUsage {
  private input: number | undefined;
  private output: number | undefined;
  private cacheRead = 0;
  private cacheWrite = 0;
  /** The part of cacheWrite written for an hour (usage.cache_creation's split), priced apart from 5-minute writes. */
  private cacheWrite1h = 0;
  private thinking = 0;
  /** usage.server_tool_use: searches and fetches the upstream ran itself, billed per call. */
  private webSearch = 0;
  private webFetch = 0;

  /** One parsed event of the stream; only message_start and message_delta carry usage. */
  observe(event: unknown): void {
    const type = field(event, 'type');
    if (type === 'message_start') this.merge(field(field(event, 'message'), 'usage'));
    else if (type === 'message_delta') this.merge(field(event, 'usage'));
  }

  /** The counts so far; undefined until an event carried any. */
  usage(): Usage | undefined {
    if (this.input === undefined && this.output === undefined) return undefined;
    const outputTokens = this.output ?? 0;
    return {
      inputTokens: (this.input ?? 0) + this.cacheRead + this.cacheWrite,
      outputTokens,
      cachedInputTokens: this.cacheRead,
      cacheWriteInputTokens: this.cacheWrite,
      ...(this.cacheWrite1h > 0 ? { cacheWrite1hInputTokens: Math.min(this.cacheWrite1h, this.cacheWrite) } : {}),
      reasoningTokens: Math.min(this.thinking, outputTokens),
      ...(this.webSearch > 0 || this.webFetch > 0 ? { serverToolCalls: serverToolCalls(this.webSearch, this.webFetch) } : {}),
      estimated: false,
    };
  }

  /** A usage object's counts replace the ones before; counts it leaves out (or null) stay. */
  private merge(usage: unknown): void {
    this.input = count(field(usage, 'input_tokens')) ?? this.input;
    this.output = count(field(usage, 'output_tokens')) ?? this.output;
    this.cacheRead = count(field(usage, 'cache_read_input_tokens')) ?? this.cacheRead;
    this.cacheWrite = count(field(usage, 'cache_creation_input_tokens')) ?? this.cacheWrite;
    this.cacheWrite1h = count(field(field(usage, 'cache_creation'), 'ephemeral_1h_input_tokens')) ?? this.cacheWrite1h;
    this.thinking = count(field(field(usage, 'output_tokens_details'), 'thinking_tokens')) ?? this.thinking;
    const tools = field(usage, 'server_tool_use');
    this.webSearch = count(field(tools, 'web_search_requests')) ?? this.webSearch;
    this.webFetch = count(field(tools, 'web_fetch_requests')) ?? this.webFetch;
  }
}

function serverToolCalls(webSearch: number, webFetch: number): ServerToolCalls {
  return { ...(webSearch > 0 ? { webSearch } : {}), ...(webFetch > 0 ? { webFetch } : {}) };
}

/**
 * The output tokens a Messages request reserves against the limits: its max_tokens (required by the API, so
 * always there in a valid request); undefined when it is missing or not a positive integer.
 */
export function messagesReservedOutputTokens(body: unknown): number | undefined {
  const max = field(body, 'max_tokens');
  return typeof max === 'number' && Number.isSafeInteger(max) && max > 0 ? max : undefined;
}

function field(v: unknown, key: string): unknown {
  return v && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
}

function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}
