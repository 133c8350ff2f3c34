// What a trace learns from the answer's body, as an exchange transform that only observes: the first chunk of a
// stream (time to first token), from the body's tail the model that answered, and with --trace-content the
// answer's content. Usage comes from the usage feature (what its handler returned, given to onEnd). Skipped when the
// request's trace is not recorded (not an ExchangeSpans): an unsampled request gets no observer.
import { type AnswerHandler, type ExchangeTransform, toldAsEvents } from '../../dataplane/exchange/transform.js';
import { lastKeyAt, QuotedKey } from '../../dataplane/stream/json-key-search.js';
import { skipJsonSpace } from '../../dataplane/request/json-scan.js';
import { AnswerTail, FirstChunk } from '../../dataplane/stream/sse.js';
import { OutputCollector } from './content.js';
import { contentMasks } from './content-masks.js';
import { ExchangeSpans } from './exchange-trace.js';

const MODEL = new QuotedKey('model');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
/** Model names longer than this (in characters) are not taken. */
const MAX_MODEL_CHARS = 256;

/**
 * Pure: the last `"model": "…"` value in the bytes of a JSON or SSE text (the answer names the model that served
 * it), up to MAX_MODEL_CHARS and without escapes. Searched from the end, in the bytes rather than in a decoded
 * string (as the usage feature reads `usage`): every byte the search looks at is ASCII, which UTF-8 never uses
 * inside a multi-byte character, and decoding the tail to search it cost more than the rest of this transform.
 */
export function lastModel(bytes: Buffer): string | undefined {
  for (let at = lastKeyAt(bytes, MODEL, bytes.length); at >= 0; at = lastKeyAt(bytes, MODEL, at - 1)) {
    let i = skipJsonSpace(bytes, at + MODEL.bytes.length);
    if (bytes[i] !== COLON) continue;
    i = skipJsonSpace(bytes, i + 1);
    if (bytes[i] !== QUOTE) continue;
    const start = i + 1;
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const limit = Math.min(bytes.length, start + 3 * MAX_MODEL_CHARS + 1);
    let end = start;
    while (end < limit && bytes[end] !== QUOTE && bytes[end] !== BACKSLASH) end++;
    if (end === start || end === limit || bytes[end] !== QUOTE) continue;
    const model = bytes.toString('utf8', start, end);
    if (model.length <= MAX_MODEL_CHARS) return model;
  }
  return undefined;
}

export function tracingTransform(): ExchangeTransform {
  return {
    onResponseStart(a): AnswerHandler | undefined {
      const { exchange: x, backend, statusCode, isStream, contentType } = a;
      const spans = x.trace;
      if (!(spans instanceof ExchangeSpans)) return undefined;
      const readable = statusCode < 300 && (isStream || contentType.includes('json'));
      if (!isStream && !readable) return undefined;
      const tail = readable ? new AnswerTail(0) : undefined;
      // The content is read as the client gets it: a whole answer that a handler before this one tells as the
      // family's events (whole-stream, the Messages translation) has its content type set to an event stream.
      const events = toldAsEvents(a);
      const content = readable && spans.content ? new OutputCollector(events) : undefined;
      // As the time-to-first-token metric counts it: the upstream's stream, or a whole answer retold as events.
      const first = events ? new FirstChunk() : undefined;
      return {
        onData(chunk) {
          if (first?.now()) spans.firstChunk();
          tail?.push(chunk);
          content?.push(chunk);
          return chunk;
        },
        onEnd(usage) {
          if (usage) spans.usage(usage);
          if (!tail) return undefined;
          const model = lastModel(tail.tail());
          if (model !== undefined) spans.answered(model);
          // The stage sees the body before the relay masks the backend's credentials: masked here too.
          const output = content?.text(contentMasks(x.route, backend));
          if (output !== undefined) spans.output(output);
          return undefined;
        },
      };
    },
  };
}
