// A stream request that the upstream answered with a whole JSON answer (a server that ignores `stream`, a cache
// that answers whole; a Responses retrieve with `stream=true` too): the client gets that answer as its family's stream events (chat-events.ts,
// responses-events.ts, image-events.ts, transcription-events.ts), which is all a stream's client parses (the openai SDK finds no event in a
// JSON body). Wired after usage, which reads the whole answer's usage as for any answer. A streamed answer is not
// touched: no handler, no per-chunk work. The Messages API does the same in its own feature (answer-events.ts).
import type { Answer, AnswerHandler, ExchangeTransform, Feature, RequestPlan } from '../../dataplane/exchange/transform.js';
import { jsonOr, WholeBody } from '../../dataplane/exchange/whole-body.js';
import { GatewayError } from '../../model/errors.js';
import type { Family } from '../../model/families.js';
import { chatEvents } from './chat-events.js';
import { imageEvents } from './image-events.js';
import { responseEvents } from './responses-events.js';
import { transcriptionEvents } from './transcription-events.js';

const SSE_TYPE = 'text/event-stream; charset=utf-8';
/** The most of a whole text answer held to tell it as events. */
const MAX_TEXT_BYTES = 8 * 1024 * 1024;
/** The most of a whole images answer held (base64 images are large: a few MB each). */
const MAX_IMAGES_BYTES = 64 * 1024 * 1024;

/** Makes the events of a parsed whole answer; undefined when it is not the family's answer. */
type ToEvents = (answer: unknown, plan: RequestPlan) => string | undefined;

const FAMILIES: Partial<Record<Family, { readonly events: ToEvents; readonly maxBytes: number; readonly what: string }>> = {
  'chat.completions': { events: (a, plan) => chatEvents(a, { includeUsage: includeUsage(plan) }), maxBytes: MAX_TEXT_BYTES, what: 'a chat completion' },
  responses: { events: (a, plan) => responseEvents(a, plan.integer('starting_after')), maxBytes: MAX_TEXT_BYTES, what: 'a response' },
  'images.generations': { events: (a) => imageEvents(a, 'generation'), maxBytes: MAX_IMAGES_BYTES, what: 'an images answer' },
  'images.edits': { events: (a) => imageEvents(a, 'edit'), maxBytes: MAX_IMAGES_BYTES, what: 'an images answer' },
  'audio.transcriptions': { events: (a) => transcriptionEvents(a), maxBytes: MAX_TEXT_BYTES, what: 'a transcription' },
};

/** Whether the client asked for the usage chunk of a chat stream (`stream_options.include_usage`). */
function includeUsage(plan: RequestPlan): boolean {
  const raw = plan.raw('stream_options');
  if (raw === undefined) return false;
  try {
    return (JSON.parse(raw) as { include_usage?: unknown } | null)?.include_usage === true;
  } catch {
    return false;
  }
}

/** Reads `stream_options` (whether a chat stream's client asked for its usage chunk). */
export function wholeStreamFeature(): Feature {
  const families: Feature['families'] = {};
  for (const family of Object.keys(FAMILIES) as Family[]) families[family] = (_x, kind) => (kind.create || kind.retrieve ? new WholeStream(family) : undefined);
  return { reads: ['stream_options'], families };
}

class WholeStream implements ExchangeTransform {
  readonly #family: Family;
  #plan: RequestPlan | undefined;

  constructor(family: Family) {
    this.#family = family;
  }

  prepare(plan: RequestPlan): void {
    if (plan.stream) this.#plan = plan;
  }

  onResponseStart(a: Answer): AnswerHandler | undefined {
    const plan = this.#plan;
    if (!plan || a.isStream || a.statusCode >= 300 || !a.contentType.includes('json')) return undefined;
    const family = FAMILIES[this.#family]!;
    a.headers['content-type'] = SSE_TYPE;
    return new WholeAnswerEvents(family.maxBytes, family.what, (answer) => family.events(answer, plan));
  }
}

/** Holds the whole answer and passes on its events at the end. */
class WholeAnswerEvents extends WholeBody {
  readonly streams = true;
  protected readonly purpose = 'tell as stream events';
  readonly #what: string;
  readonly #events: (answer: unknown) => string | undefined;

  constructor(maxBytes: number, what: string, events: (answer: unknown) => string | undefined) {
    super(maxBytes, true);
    this.#what = what;
    this.#events = events;
  }

  protected remake(text: string): string {
    const events = this.#events(jsonOr(text, undefined));
    // The head waits for this body (holdsBody): an answer that is not the family's is an error, not a 200 cut short.
    if (events === undefined)
      throw new GatewayError(502, `The upstream answered a stream request with JSON that is not ${this.#what}.`, { code: 'upstream_error' });
    return events;
  }
}
