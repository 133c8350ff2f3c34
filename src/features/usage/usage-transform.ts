// Usage as an exchange transform: what a routed request consumed is returned by its answer handler when the body
// completes (`onEnd`), or estimated once the response is over (`unreported`); the exchange settles with it. Counts come from the upstream's usage object where it gave one (a chat stream is made to give one,
// see include-usage.ts, and a speech stream reports its tokens too); speech is measured in input characters and videos in seconds, both known exactly; when
// the upstream reported nothing for a text answer (a stream cut short, an upstream that died or omits usage)
// the counts are estimated (an approximation of the tokenizer, estimate.ts) and marked so. An error answer, or none, records zero.
import { namedBackend, type Routed } from '../../dataplane/exchange/exchange.js';
import type { Answer, AnswerHandler, ExchangeTransform, Feature, ReadOnBound, RequestPlan, TransformFactory } from '../../dataplane/exchange/transform.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import { FAMILIES, type Family } from '../../model/families.js';
import type { Usage } from '../../model/usage.js';
import { AnswerTail as AnswerBytes, isEventStreamBody } from '../../dataplane/stream/sse.js';
import { AnswerHead } from './answer-head.js';
import { BackgroundCompletion, type ClaimOnce } from './background-completion.js';
import { estimateInput, estimateOutput, SAMPLE_BYTES } from './estimate.js';
import { ImageCounter } from './image-count.js';
import { statedImageTerms } from './image-terms.js';
import { streamOptionsWithUsage, UsageChunkFilter } from './include-usage.js';
import { mayCallServerTools, ResponsesToolCounter, uncountedCalls } from './server-tools.js';
import { priced } from './usage-cost.js';
import { VideoFailure } from './video-failure.js';
import { isEmpty, lastSeconds, lastUsageObject, type Reported, reportedCounts, toUsage } from './usage-object.js';

const ZERO: Usage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0, estimated: false };

/** Families whose answer is text an estimate can count; the others' answers are media. */
const TEXT_OUT = new Set<Family>(['chat.completions', 'responses', 'audio.transcriptions', 'audio.translations', 'messages']);
/** Families measured from the request (speech in characters, videos in seconds), not estimated in tokens. */
const MEASURED = new Set<Family>(['audio.speech', 'videos']);
/** Families that make images, counted from the answer with the size and quality the request named. */
const IMAGES = new Set<Family>(['images.generations', 'images.edits']);
/** Families measured in time rather than tokens when the upstream reports no tokens. */
const TIMED = new Set<Family>(['audio.transcriptions', 'audio.translations', 'videos']);
/** The head kept of a timed answer: its top-level length (a verbose transcription's duration) is among its first members. */
const HEAD_BYTES = 4096;
/** Text answers are kept whole up to this size for an estimate; a longer one is estimated from its tail, scaled. */
const KEEP_FOR_ESTIMATE = 2 * SAMPLE_BYTES;

/**
 * How long an answer whose client left is read on for its usage (docs/usage-and-limits.md): the upstream sends
 * its usage last, and keeps generating (and charging) until its answer ends or the gateway cuts it.
 */
const DEFAULT_READ_ON: ReadOnBound = Object.freeze({ ms: 10_000, bytes: 1024 * 1024 });

export interface UsageOptions {
  /** How far an answer is read on after its client left (default DEFAULT_READ_ON; ms 0: cut at once, estimated). */
  readonly readOn?: ReadOnBound;
  /** ISO 4217 code of the gateway's one currency, that prices and costs are in (serve --currency; default USD). */
  readonly currency?: string;
}

/**
 * Usage on every family. Reads `stream_options` (whether a chat stream already reports usage), `input` (the
 * characters of speech), `seconds` (a video's length), an image request's `size`, `quality` and `n`, and `tools` and
 * `prompt` (whether the upstream may run a tool it bills per call, server-tools.ts). `claimOnce` claims a finished
 * background response for its record, once in all replicas sharing the limits store.
 */
export function usageFeature(onRecord: (x: Routed, u: Usage) => void, claimOnce: ClaimOnce, options: UsageOptions = {}): Feature {
  const factory = usageTransforms(onRecord, options.readOn ?? DEFAULT_READ_ON, options.currency ?? 'USD', claimOnce);
  return {
    reads: ['stream_options', 'input', 'seconds', 'size', 'quality', 'n', 'tools', 'prompt'],
    families: Object.fromEntries(FAMILIES.map((f) => [f, factory])),
  };
}

/** Families whose upstream may run tools billed per call: calls an estimate cannot know make its cost unknown. */
const SERVER_TOOLS = new Set<Family>(['responses', 'messages']);

/**
 * The usage transform of every family. `onRecord` sees each request's usage (metrics), priced. Follow-ups that
 * consume nothing (reads, deletes, cancels) record nothing, but for the first that shows a background response
 * finished (background-completion.ts) and the first that shows a video failed (video-failure.ts); a remix is recorded
 * like a create.
 */
function usageTransforms(onRecord: (x: Routed, u: Usage) => void, readOn: ReadOnBound, currency: string, claimOnce: ClaimOnce): TransformFactory {
  const record = (x: Routed) =>
    x.onSettled((u) => {
      if (u) onRecord(x, u);
    });
  return (x, kind) => {
    if (kind.consumes) {
      const tap = new UsageTap(x, readOn);
      x.priceUsage((u) => priced(u, tap.backend(), x.family, currency));
      record(x);
      return tap;
    }
    if (!kind.background && !kind.video) return undefined;
    // At the prices of the one backend holding the response, which answered the follow-up.
    x.priceUsage((u) => priced(u, namedBackend(x), x.family, currency));
    record(x);
    return kind.background ? new BackgroundCompletion(kind.background, claimOnce) : new VideoFailure(kind.video!, claimOnce);
  };
}

class UsageTap implements ExchangeTransform {
  readonly #x: Routed;
  readonly #readOn: ReadOnBound;
  #plan: RequestPlan | undefined;
  /** The stream_options member sent upstream when the gateway asks a chat stream for usage. */
  #streamOptions: string | undefined;
  #answer: Answer | undefined;
  #bytes: AnswerBytes | undefined;
  #head: AnswerHead | undefined;
  /** The usage object of the usage-only chunk taken out of a chat stream. */
  #taken: Record<string, unknown> | undefined;
  #images: ImageCounter | undefined;
  /** A Responses answer's searches, counted only when the request's tools could run one. */
  #tools: ResponsesToolCounter | undefined;
  /** A stream request's text answer labelled JSON is an event stream (told at its first byte; undefined: not told). */
  eventStream: boolean | undefined;

  constructor(x: Routed, readOn: ReadOnBound) {
    this.#x = x;
    this.#readOn = readOn;
  }

  /** The backend that answered, else the one tried last (a client that left while it worked). */
  backend(): CompiledBackend | undefined {
    return this.#answer?.backend ?? namedBackend(this.#x);
  }

  prepare(plan: RequestPlan): void {
    this.#plan = plan;
    if (this.#x.family === 'chat.completions' && plan.stream) this.#streamOptions = streamOptionsWithUsage(plan.raw('stream_options'));
  }

  members(): Readonly<Record<string, string>> | undefined {
    return this.#streamOptions === undefined ? undefined : { stream_options: this.#streamOptions };
  }

  onResponseStart(a: Answer): AnswerHandler | undefined {
    if (a.statusCode >= 300) return undefined;
    this.#answer = a;
    this.#bytes = new AnswerBytes(TEXT_OUT.has(this.#x.family) ? KEEP_FOR_ESTIMATE : 0);
    // The gateway asked a chat stream for its usage: the usage chunk is filtered out of its events.
    const filter = this.#streamOptions === undefined ? undefined : () => new UsageChunkFilter((u) => (this.#taken = u));
    if (IMAGES.has(this.#x.family)) this.#images = new ImageCounter(a.isStream);
    if (TIMED.has(this.#x.family)) this.#head = new AnswerHead(HEAD_BYTES);
    if (this.#x.family === 'responses' && mayCallServerTools(this.#plan)) this.#tools = new ResponsesToolCounter(a.isStream);
    const observer = this.#images ?? this.#head ?? this.#tools;
    // Only a stream request's text answer labelled JSON is looked at for what it is: what its estimate counts, and
    // whether it is filtered (an event stream its server labelled JSON; a whole answer whole-stream tells as events).
    const labelled = !a.isStream && (this.#plan?.stream ?? false) && TEXT_OUT.has(this.#x.family) && a.contentType.includes('json');
    // Media that is measured from the request (speech, videos) has no usage at its end to read on for, but for a
    // speech stream, whose `speech.audio.done` event reports its tokens.
    const readsOn = !MEASURED.has(this.#x.family) || (this.#x.family === 'audio.speech' && a.isStream);
    const readOn = readsOn ? this.#readOn : undefined;
    return new UsageReader(this, this.#bytes, a.isStream ? filter?.() : undefined, observer, readOn, labelled ? { filter } : undefined);
  }

  /** The body completed: what the upstream reported, if it did (else undefined, and the estimate settles it). */
  complete(): Usage | undefined {
    const x = this.#x;
    const tail = this.#bytes!.tail();
    const usage = this.#taken ?? lastUsageObject(tail);
    const reported: Reported = usage ? reportedCounts(usage) : {};
    if (!isEmpty(reported)) return this.#withServerTools(this.#withMeasures(toUsage(this.#audioOut(reported), false)));
    const head = this.#head;
    const seconds = TIMED.has(x.family) ? (lastSeconds(tail.toString('utf8')) ?? (head && lastSeconds(head.text())) ?? this.#requestedSeconds()) : undefined;
    if (seconds !== undefined || x.family === 'audio.speech') return this.#withMeasures(toUsage({ seconds }, false));
    // Images without token usage (a model priced per image): the images counted are exact.
    if ((this.#images?.count ?? 0) > 0) return this.#withMeasures(toUsage({}, false));
    return undefined;
  }

  /**
   * The response is over with nothing recorded. Without a successful answer nothing was consumed, unless the
   * client left while the upstream was working on its request: the upstream has read the input by then.
   */
  unreported(partial?: Usage): Usage | Promise<Usage> {
    const x = this.#x;
    const cut = this.#answer !== undefined;
    if (!cut && !(x.aborted && x.backend !== undefined)) return ZERO;
    if (cut && MEASURED.has(x.family)) return this.#withMeasures(ZERO);
    const estimate = this.#estimate();
    // What the upstream had reported stands (a Messages stream's input and cache counts); the output it had not
    // finished counting is at least what streamed.
    if (!partial) return estimate;
    return this.#withMeasures({ ...partial, outputTokens: Math.max(partial.outputTokens, estimate.outputTokens), estimated: true });
  }

  #estimate(): Usage {
    const x = this.#x;
    const a = this.#answer;
    const bytes = this.#bytes;
    let outputTokens = 0;
    if (a && bytes && TEXT_OUT.has(x.family) && bytes.total > 0) {
      const held = bytes.text();
      const sample = held.length > SAMPLE_BYTES ? held.slice(-SAMPLE_BYTES) : held;
      const sampled = Buffer.byteLength(sample);
      const events = a.isStream || this.eventStream === true;
      outputTokens = estimateOutput(sample, events, a.contentType.includes('json'), sampled < bytes.total ? bytes.total / sampled : 1);
    }
    const u = this.#withMeasures({ ...ZERO, inputTokens: estimateInput(x.family, this.#plan?.json), outputTokens, estimated: true });
    // Searches the upstream may have run and billed are in no estimate: unknown, never left out.
    return SERVER_TOOLS.has(x.family) && mayCallServerTools(this.#plan) ? { ...u, serverToolCalls: uncountedCalls() } : u;
  }

  /** Speech's output tokens (gpt-4o-mini-tts's `speech.audio.done` usage) are all the audio it made. */
  #audioOut(r: Reported): Reported {
    return this.#x.family === 'audio.speech' && r.audioOutputTokens === undefined ? { ...r, audioOutputTokens: r.outputTokens } : r;
  }

  /** A Responses answer's web and file searches, counted as it passed when the request had such tools. */
  #withServerTools(u: Usage): Usage {
    const calls = this.#tools?.calls();
    return calls ? { ...u, serverToolCalls: calls } : u;
  }

  /**
   * Adds what is measured from the request: the characters of speech, the seconds a video asked for, the images
   * made (counted in a whole answer; else, estimated, the `n` asked for) at the size and quality the answer states,
   * else those asked for.
   */
  #withMeasures(u: Usage): Usage {
    const family = this.#x.family;
    if (IMAGES.has(family)) {
      const plan = this.#plan;
      const count = u.estimated ? (plan?.integer('n') ?? 1) : (this.#images?.count ?? 0);
      // What a whole answer says it made decides; a request's "auto" (or silence) names no price.
      const stated = !u.estimated && this.#bytes ? statedImageTerms(this.#bytes.tail()) : {};
      const size = stated.size ?? plan?.member('size');
      const quality = stated.quality ?? plan?.member('quality');
      return { ...u, images: { count, ...(size !== undefined ? { size } : {}), ...(quality !== undefined ? { quality } : {}) } };
    }
    if (family === 'audio.speech') return { ...u, characters: [...(this.#plan?.member('input') ?? '')].length };
    if (family === 'videos' && u.seconds === undefined) {
      const seconds = this.#requestedSeconds();
      return seconds === undefined ? u : { ...u, seconds };
    }
    return u;
  }

  /** A video's `seconds` as the client asked (a string in the API, "4", "8" or "12"). */
  #requestedSeconds(): number | undefined {
    const plan = this.#plan;
    if (!plan) return undefined;
    const n = Number(plan.member('seconds') ?? plan.integer('seconds'));
    return Number.isFinite(n) && n >= 0 ? n : undefined;
  }
}

/** What the usage feature filters out of a chat stream it asked for usage. */
interface UsageFilter {
  push(chunk: Buffer): Buffer;
  end(): Buffer;
}

/** A stream request's answer labelled JSON: the filter its events need, if they turn out to be events. */
interface Labelled {
  readonly filter: (() => UsageFilter) | undefined;
}

/** The usage feature's view of one answer: the bytes it keeps, the usage chunk it takes out of a chat stream. */
class UsageReader implements AnswerHandler {
  readonly edits: boolean;
  readonly readOn: ReadOnBound | undefined;
  readonly #tap: UsageTap;
  readonly #bytes: AnswerBytes;
  #filter: UsageFilter | undefined;
  /** What else sees the answer's bytes: an image counter, the head of a timed answer, or a search counter. */
  readonly #observer: { push(chunk: Buffer): void } | undefined;
  /**
   * A body labelled JSON, until its first byte past whitespace tells whether it is an event stream (then filtered
   * as any, when the gateway asked for its usage) or a whole answer (passed untouched).
   */
  #labelled: Labelled | undefined;

  constructor(
    tap: UsageTap,
    bytes: AnswerBytes,
    filter: UsageFilter | undefined,
    observer: { push(chunk: Buffer): void } | undefined,
    readOn: ReadOnBound | undefined,
    labelled?: Labelled,
  ) {
    this.#tap = tap;
    this.#bytes = bytes;
    this.#filter = filter;
    this.#observer = observer;
    this.edits = filter !== undefined || labelled?.filter !== undefined;
    this.readOn = readOn;
    this.#labelled = labelled;
  }

  onData(chunk: Buffer): Buffer {
    if (this.#labelled) {
      const events = isEventStreamBody(chunk);
      this.#tap.eventStream = events;
      if (events) this.#filter = this.#labelled.filter?.();
      if (events !== undefined) this.#labelled = undefined;
    }
    const out = this.#filter ? this.#filter.push(chunk) : chunk;
    if (out.length > 0) this.#bytes.push(out);
    this.#observer?.push(out);
    return out;
  }

  flush(): Buffer | undefined {
    const rest = this.#filter?.end();
    if (rest?.length) this.#bytes.push(rest);
    return rest;
  }

  onEnd(reported: Usage | undefined): Usage | undefined {
    // A handler before this one read the usage already (a Messages answer, whose usage it knows how to read): kept.
    if (reported) return reported;
    // Runs as the upstream body ends, before the client's response is finished: a throw here would fail the body.
    // An answer usage cannot read is estimated when the exchange ends instead.
    try {
      return this.#tap.complete();
    } catch {
      return undefined;
    }
  }
}
