// The answer handlers every API translation shares (Messages ↔ chat, Responses → chat → Messages): a whole answer
// remade at its end by the feature's pure translation; an upstream event stream read with the one SSE reader
// (stream/sse-events.ts), each event handed to the feature's translator and what it returns sent on; and a stream
// request's answer labelled JSON, told an event stream or a whole answer by its first byte that is not whitespace
// (isEventStreamBody), then handled as the one or the other.
import type { Usage } from '../../model/usage.js';
import { isEventStreamBody } from '../stream/sse.js';
import { SseEvents } from '../stream/sse-events.js';
import type { AnswerHandler } from './transform.js';
import { jsonOr, WholeBody } from './whole-body.js';

const EMPTY = Buffer.alloc(0);
/** The most of a whole answer held to translate it. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** A feature's whole-answer translation: the answer parsed as JSON (undefined when it is not), remade, with its usage. */
export type WholeTranslation = (answer: unknown) => { readonly body: unknown; readonly usage: Usage | undefined };

/**
 * A whole upstream answer remade at its end. The head waits for it (holdsBody): a translation that throws (a
 * GatewayError for a body that is no answer of the upstream's API) is answered with its status, not a 200 cut short.
 */
export class TranslatedWhole extends WholeBody {
  protected readonly purpose = 'translate';
  readonly #translate: WholeTranslation;
  #usage: Usage | undefined;

  constructor(translate: WholeTranslation) {
    super(MAX_ANSWER_BYTES);
    this.#translate = translate;
  }

  protected remake(text: string): string {
    const { body, usage } = this.#translate(jsonOr(text, undefined));
    this.#usage = usage;
    return JSON.stringify(body);
  }

  onEnd(): Usage | undefined {
    return this.#usage;
  }
}

/** A feature's stream translation: pure, fed event by event. */
export interface EventTranslator {
  /** One upstream event: its data parsed as JSON (or the string `[DONE]`), and its `event:` name when it had one. */
  push(data: unknown, event: string | undefined): string;
  /** The upstream ended: the events still owed (an error event when it never finished), and the usage it reported. */
  end(): { events: string; usage: Usage | undefined };
  /** The usage reported so far, for a stream cut short (the estimate completes it). */
  readonly usageSoFar?: Usage | undefined;
}

/** An upstream event stream as the client's API's events. `decode`: frames to turn into SSE first (Bedrock's). */
export class TranslatedEventStream implements AnswerHandler {
  readonly edits = true;
  readonly #translator: EventTranslator;
  readonly #decode: AnswerHandler | undefined;
  readonly #events = new SseEvents(
    () => true,
    (event, data) => this.#event(event, data),
  );
  #out = '';
  #usage: Usage | undefined;

  constructor(translator: EventTranslator, decode?: AnswerHandler) {
    this.#translator = translator;
    this.#decode = decode;
  }

  onData(chunk: Buffer): Buffer {
    this.#events.push(this.#decode ? this.#decode.onData!(chunk) : chunk);
    return this.#take();
  }

  flush(): Buffer | undefined {
    const rest = this.#decode?.flush?.();
    if (rest && rest.length > 0) this.#events.push(rest);
    this.#events.end();
    const { events, usage } = this.#translator.end();
    this.#usage = usage;
    this.#out += events;
    return this.#take();
  }

  onEnd(): Usage | undefined {
    return this.#usage;
  }

  partial(): Usage | undefined {
    return this.#translator.usageSoFar;
  }

  #event(event: string | undefined, data: string): void {
    const trimmed = data.trim();
    let parsed: unknown = trimmed;
    if (trimmed !== '[DONE]') {
      try {
        parsed = JSON.parse(trimmed);
      } catch {
        return; // not an event's JSON (a comment-like line some servers send): nothing to translate
      }
    }
    this.#out += this.#translator.push(parsed, event);
  }

  #take(): Buffer {
    if (this.#out === '') return EMPTY;
    const out = Buffer.from(this.#out);
    this.#out = '';
    return out;
  }
}

/**
 * A stream request's 2xx answer labelled JSON: `stream()` for an event stream, `whole()` for anything else (a body
 * of whitespace only included: the whole path fails it as it fails any body it cannot translate). `streams`: the
 * whole handler tells its answer as events itself (else whole-stream does, later).
 */
export class LabelledAnswer implements AnswerHandler {
  readonly edits = true;
  readonly holdsBody = true;
  readonly streams: boolean;
  readonly #stream: () => AnswerHandler;
  readonly #whole: () => AnswerHandler;
  #chosen: AnswerHandler | undefined;
  /** Whitespace that came before the first byte that tells. */
  #held: Buffer[] = [];

  constructor(streams: boolean, stream: () => AnswerHandler, whole: () => AnswerHandler) {
    this.streams = streams;
    this.#stream = stream;
    this.#whole = whole;
  }

  onData(chunk: Buffer): Buffer {
    if (this.#chosen) return this.#chosen.onData!(chunk);
    const events = isEventStreamBody(chunk);
    this.#held.push(chunk);
    if (events === undefined) return EMPTY;
    this.#chosen = events ? this.#stream() : this.#whole();
    const held = Buffer.concat(this.#held);
    this.#held = [];
    return this.#chosen.onData!(held);
  }

  flush(): Buffer | undefined {
    this.#chosen ??= this.#whole();
    if (this.#held.length > 0) this.#chosen.onData!(Buffer.concat(this.#held));
    return this.#chosen.flush?.();
  }

  onEnd(usage?: Usage): Usage | undefined {
    return this.#chosen?.onEnd?.(usage);
  }

  partial(): Usage | undefined {
    return this.#chosen?.partial?.();
  }
}
