// A chat stream reports usage only when the client sets `stream_options.include_usage`. When it did not, the
// gateway asks anyway (keeping the client's other stream options) and takes out what asking adds: the extra
// usage-only chunk (`"choices": []` with a `usage` object) and the `"usage": null` OpenAI then puts on every other
// chunk. The client receives the chunks it asked for and the gateway learns the real counts. Pure.
import { type SseLineReader, SseSplitter } from '../../dataplane/stream/sse.js';

/**
 * The `stream_options` member to send upstream, given the client's (its raw JSON text, if any); undefined when
 * the client already asked for usage, or sent something that is not an object (the upstream answers that).
 */
export function streamOptionsWithUsage(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === 'null') return '{"include_usage":true}';
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  if ((value as Record<string, unknown>)['include_usage'] === true) return undefined;
  return JSON.stringify({ ...value, include_usage: true });
}

/** A usage-only chunk is a few hundred bytes: an event longer than this is passed on as it arrives, not held. */
const MAX_HELD = 16 * 1024;
/**
 * Of an event passed on as it arrives, the last bytes are kept back until it ends: OpenAI writes the null usage
 * there (after the choices, before a short `obfuscation`), to be cut like a short event's.
 */
const TRAIL = 1024;
const USAGE_OBJECT = /"usage"\s*:\s*\{/;
const NULL_USAGE = /,\s*"usage"\s*:\s*null(?=\s*[,}])|"usage"\s*:\s*null\s*,\s*/;
const USAGE_KEY = Buffer.from('"usage"');
const EMPTY = Buffer.alloc(0);

/**
 * Passes Server-Sent Events through and drops the usage-only chat chunk, handing its usage object to `onUsage`.
 * Only the event being read is held, up to MAX_HELD (a chunk is a few hundred bytes); complete events go on at
 * once, byte for byte. The events are found by the one SSE splitter (dataplane/stream/sse.ts).
 */
export class UsageChunkFilter implements SseLineReader {
  readonly #onUsage: (usage: Record<string, unknown>) => void;
  readonly #lines = new SseSplitter();
  /** Bytes of the event being read that arrived in earlier chunks. */
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** The event being read outgrew MAX_HELD: it cannot be a usage chunk, and goes on as it arrives. */
  #passing = false;
  /** The last bytes of the event being passed on, held until it ends (TRAIL). */
  #trail: Buffer | undefined;
  /** The null usage of the event being passed on was cut from its head already. */
  #cut = false;
  /** The last event was dropped: an LF completing its CRLF in the next chunk is dropped too. */
  #dropped = false;
  /** Where the event being read starts in the chunk being read. */
  #eventStart = 0;
  /**
   * What goes on from the chunk being read: the first piece, and the others only when there are more (a chunk that
   * is one whole event, the usual case, so allocates nothing here; an array grows to 17 slots at its first push).
   */
  #first: Buffer | undefined;
  #more: Buffer[] | undefined;

  constructor(onUsage: (usage: Record<string, unknown>) => void) {
    this.#onUsage = onUsage;
  }

  push(chunk: Buffer): Buffer {
    this.#eventStart = 0;
    this.#lines.push(chunk, this);
    if (this.#eventStart < chunk.length) this.#hold(chunk.subarray(this.#eventStart));
    const first = this.#first;
    const more = this.#more;
    this.#first = this.#more = undefined;
    // Most chunks are whole events with nothing taken out: passed on as they came, without a copy.
    if (first === undefined) return EMPTY;
    return more === undefined ? first : Buffer.concat([first, ...more]);
  }

  lineBytes(): void {}

  lineEnd(chunk: Buffer, _at: number, next: number, blank: boolean, completes: boolean): void {
    if (completes) {
      // The LF of a CRLF that ended the previous event, in a new chunk: it goes where that event went (an event
      // being passed on has not ended: the LF is its own).
      if (this.#pending.length === 0 && !this.#passing) {
        if (!this.#dropped) this.#emit(chunk.subarray(0, 1));
        this.#eventStart = 1;
      }
      return;
    }
    if (!blank) return;
    const start = this.#eventStart;
    // A chunk that is one whole event (the common case) goes on as the same Buffer, not a view of it.
    this.#event(start === 0 && next === chunk.length ? chunk : chunk.subarray(start, next));
    this.#eventStart = next;
  }

  #emit(bytes: Buffer): void {
    if (this.#first === undefined) this.#first = bytes;
    else (this.#more ??= []).push(bytes);
  }

  end(): Buffer {
    const held = this.#trail ? [...this.#pending, this.#trail] : this.#pending;
    const rest = held.length > 0 ? Buffer.concat(held) : EMPTY;
    this.#trail = undefined;
    this.#pending = [];
    this.#pendingBytes = 0;
    return rest;
  }

  #hold(bytes: Buffer): void {
    if (this.#passing) {
      this.#pass(bytes);
      return;
    }
    this.#pending.push(bytes);
    this.#pendingBytes += bytes.length;
    if (this.#pendingBytes <= MAX_HELD) return;
    const head = Buffer.concat(this.#pending);
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#passing = true;
    // A null usage written first (Python servers) is in the head.
    const cut = withoutNullUsageBytes(head);
    this.#cut = cut !== undefined;
    this.#pass(cut ?? head);
  }

  /** Passes on the bytes of a long event, but for its last TRAIL bytes. */
  #pass(bytes: Buffer): void {
    const all = this.#trail ? Buffer.concat([this.#trail, bytes]) : bytes;
    if (all.length <= TRAIL) {
      this.#trail = all;
      return;
    }
    this.#emit(all.subarray(0, all.length - TRAIL));
    this.#trail = all.subarray(all.length - TRAIL);
  }

  #event(tail: Buffer): void {
    if (this.#passing) {
      const end = this.#trail ? Buffer.concat([this.#trail, tail]) : tail;
      this.#emit((!this.#cut && withoutNullUsageBytes(end)) || end);
      this.#passing = this.#cut = this.#dropped = false;
      this.#trail = undefined;
      return;
    }
    let bytes = tail;
    if (this.#pending.length > 0) {
      bytes = Buffer.concat([...this.#pending, tail]);
      this.#pending = [];
      this.#pendingBytes = 0;
    }
    // Most chunks carry no "usage" at all (or only the null one asking added): found by a native search.
    const at = bytes.indexOf(USAGE_KEY);
    const cut = at < 0 ? bytes : withoutCompactNullUsage(bytes, at);
    if (cut) {
      this.#dropped = false;
      this.#emit(cut);
      return;
    }
    const text = bytes.toString('utf8');
    const usage = usageOnlyChunk(text);
    this.#dropped = usage !== undefined;
    if (usage) this.#onUsage(usage);
    else this.#emit(withoutNullUsage(bytes, text));
  }
}

/**
 * OpenAI's own form of the member asking added, on every chunk of a stream: `,"usage":null` right before the
 * object's `}` or next `,`, and no other "usage" in the event. Cut from the bytes (what the general path below would
 * make of it, without decoding the event to a string and encoding it back); undefined when the event is not in
 * that form.
 */
function withoutCompactNullUsage(event: Buffer, at: number): Buffer | undefined {
  const from = at - 1; // the comma
  const to = at + USAGE_KEY.length + 5; // past `:null`
  if (from < 0 || event[from] !== 0x2c /* , */ || to >= event.length) return undefined;
  const n = at + USAGE_KEY.length;
  if (event[n] !== 0x3a /* : */ || event[n + 1] !== 0x6e || event[n + 2] !== 0x75 || event[n + 3] !== 0x6c || event[n + 4] !== 0x6c) return undefined;
  if (event[to] !== 0x7d /* } */ && event[to] !== 0x2c) return undefined;
  if (event.indexOf(USAGE_KEY, at + 1) >= 0) return undefined;
  const out = Buffer.allocUnsafe(event.length - (to - from));
  event.copy(out, 0, 0, from);
  event.copy(out, from, to);
  return out;
}

/** An event without the `"usage": null` member asking for usage added, else the event as it came. */
function withoutNullUsage(event: Buffer, text: string): Buffer {
  const stripped = text.replace(NULL_USAGE, '');
  return stripped === text ? event : Buffer.from(stripped);
}

/**
 * The bytes without a `"usage": null` member, or undefined when they hold none. Read as latin1, one character a
 * byte, so bytes that are not whole UTF-8 characters (a long event's head or tail) come back as they were.
 */
function withoutNullUsageBytes(bytes: Buffer): Buffer | undefined {
  if (bytes.indexOf(USAGE_KEY) < 0) return undefined;
  const text = bytes.toString('latin1');
  const stripped = text.replace(NULL_USAGE, '');
  return stripped === text ? undefined : Buffer.from(stripped, 'latin1');
}

/** The usage of an event that is a usage-only chat chunk (no choices), else undefined. */
function usageOnlyChunk(text: string): Record<string, unknown> | undefined {
  if (!USAGE_OBJECT.test(text)) return undefined;
  const data = text
    .split(/\r\n|\r|\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line[5] === ' ' ? 6 : 5))
    .join('\n');
  try {
    const chunk = JSON.parse(data) as Record<string, unknown>;
    const choices = chunk['choices'];
    const usage = chunk['usage'];
    if (Array.isArray(choices) && choices.length === 0 && usage && typeof usage === 'object') return usage as Record<string, unknown>;
  } catch {
    // Not one JSON chunk: it is passed on as it is.
  }
  return undefined;
}
