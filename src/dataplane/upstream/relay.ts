// The relay of an answer's body to the client: chunk by chunk with back-pressure, through the answer handlers
// (answer-handlers.ts) and the credential mask, under the body's deadlines; the client leaving cuts the source (or,
// when a handler asks, reads it on within a bound for the usage at its end), and an event stream the upstream breaks
// off ends with an error event rather than a cut connection.
import type { Response } from 'express';
import type { Usage } from '../../model/usage.js';
import type { Routed } from '../exchange/exchange.js';
import type { AnswerHandler, ReadOnBound } from '../exchange/transform.js';
import type { BodyDeadlines } from './body-deadlines.js';
import type { CredentialMask } from './credential-mask.js';
import type { BodySink, BodySource } from './upstream-body.js';
import { SseEventHold } from '../stream/sse-event-hold.js';

export interface RelayOptions {
  /** When the source fails (event streams): the last event to send before ending cleanly. */
  readonly trailer: ((err: unknown) => string) | undefined;
  /** Masks the backend's credentials in every byte the client gets. */
  readonly mask: CredentialMask | undefined;
  /** The answer's handlers, in order: each chunk passes through their onData before the mask. */
  readonly handlers: readonly AnswerHandler[];
  readonly watch: BodyDeadlines;
  /** Keeps the upstream body from the client's abort, when the relay reads on after the client left. */
  readonly keep: () => void;
  /**
   * Writes the answer's head, when it waits for the body (a handler holds it whole): called before the first byte
   * goes out. A body that fails before then leaves the response untouched, for the caller to answer with an error.
   */
  readonly head?: (() => void) | undefined;
}

/**
 * Relays src to dst with back-pressure (as src.pipe(dst) would), passing every chunk through the handlers and
 * the mask. pipe() and pipeline() are not used: pipeline() allocates an AbortController per call and aborts it on
 * completion, which builds a DOMException with a stack trace for every request (a visible share of CPU),
 * and pipe() offers no place for the mask, which must see every byte the client gets.
 * When the source fails and a trailer is given (event streams), the client gets that last event and a clean
 * end instead of a cut connection, so SDKs report an error rather than a network failure. The client leaving
 * (the exchange ending first) cuts the source.
 * Resolves with the source's error, if it failed.
 */
export function relay(src: BodySource, dst: Response, x: Routed, o: RelayOptions): Promise<unknown> {
  return new Promise((resolve) => {
    if (x.aborted || dst.destroyed) {
      // The client left between the upstream's answer and here.
      resolve(undefined);
      cut(src, dst);
      return;
    }
    const r = new Relay(src, dst, x, o, resolve);
    // The exchange's end hook (no listener of our own): a response that ends before the body did was cut.
    x.onEnd(() => r.clientEnded());
    src.attach(r);
  });
}

/** Client gone or upstream failed mid-body: the status line is out, so cutting the connection is the only signal left. */
function cut(src: BodySource, dst: Response): void {
  if (!dst.destroyed) dst.destroy();
  src.destroy();
}

/** What the handlers held back at the end, each one's rest passed through the handlers after it; undefined: nothing. */
function handlersRest(handlers: readonly AnswerHandler[]): Buffer | undefined {
  let held: Buffer | undefined;
  for (const h of handlers) {
    const through = held && h.onData ? h.onData(held) : held;
    const rest = h.flush?.();
    held = through?.length ? (rest?.length ? Buffer.concat([through, rest]) : through) : rest?.length ? rest : undefined;
  }
  return held;
}

/** The usage the handlers return at the end, each given what those before it returned. */
function handlersUsage(handlers: readonly AnswerHandler[]): Usage | undefined {
  let usage: Usage | undefined;
  for (const h of handlers) if (h.onEnd) usage = h.onEnd(usage) ?? usage;
  return usage;
}

/** The largest read-on bound the handlers ask for; undefined when none does. */
function readOnBound(handlers: readonly AnswerHandler[]): ReadOnBound | undefined {
  let ms = 0;
  let bytes = 0;
  for (const h of handlers) {
    if (!h.readOn) continue;
    ms = Math.max(ms, h.readOn.ms);
    bytes = Math.max(bytes, h.readOn.bytes);
  }
  return ms > 0 && bytes > 0 ? { ms, bytes } : undefined;
}

/** The client left before the body completed: what the handlers' onError is told. */
const CLIENT_GONE = Object.freeze(Object.assign(new Error('the client went away'), { code: 'MG_CLIENT_GONE' }));

/** Reading on after the client left: what the bound still allows, and what lets the exchange settle. */
interface ReadingOn {
  left: number;
  readonly timer: NodeJS.Timeout;
  readonly done: () => void;
}

/** One relay's state, and the source's sink (methods on one object rather than a closure each). */
class Relay implements BodySink {
  readonly #src: BodySource;
  readonly #dst: Response;
  readonly #x: Routed;
  readonly #o: RelayOptions;
  readonly #resolve: (failure: unknown) => void;
  #settled = false;
  #failure: unknown;
  /** Event streams (those with a trailer): the event still incomplete, dropped if the source fails. */
  readonly #events: SseEventHold | undefined;
  #waiting = false;
  #onDrain: (() => void) | undefined;
  #readingOn: ReadingOn | undefined;
  /** The answer's head, while it waits for the body. */
  #head: (() => void) | undefined;

  constructor(src: BodySource, dst: Response, x: Routed, o: RelayOptions, resolve: (failure: unknown) => void) {
    this.#src = src;
    this.#dst = dst;
    this.#x = x;
    this.#o = o;
    this.#resolve = resolve;
    this.#head = o.head;
    this.#events = o.trailer ? new SseEventHold() : undefined;
  }

  #writeHead(): void {
    const head = this.#head;
    this.#head = undefined;
    head?.();
  }

  data(chunk: Buffer): void {
    if (this.#readingOn) return this.#readOnData(chunk);
    if (this.#settled) return;
    const o = this.#o;
    o.watch.touch();
    try {
      for (const h of o.handlers) {
        if (h.onData) chunk = h.onData(chunk);
        if (chunk.length === 0) return;
      }
    } catch (err) {
      // A handler that cannot read the body fails it, rather than letting bytes it should have edited through.
      this.error(err);
      return;
    }
    const masked = o.mask ? o.mask.push(chunk) : chunk;
    const out = this.#events && masked.length > 0 ? this.#events.push(masked) : masked;
    if (out.length === 0) return;
    this.#writeHead();
    if (!this.#dst.write(out) && !this.#waiting) {
      this.#waiting = true;
      this.#src.pause();
      this.#onDrain ??= () => {
        this.#waiting = false;
        this.#src.resume();
      };
      this.#dst.once('drain', this.#onDrain);
    }
  }

  end(): void {
    if (this.#readingOn) return this.#readOnEnd();
    if (this.#settled) return;
    const o = this.#o;
    let held: Buffer | undefined;
    if (o.handlers.length > 0) {
      try {
        held = handlersRest(o.handlers);
      } catch (err) {
        this.#reportFailedUsage();
        this.error(err);
        return;
      }
      // Reported before the response ends: the exchange settles with it when the response is over.
      this.#reportUsage();
    }
    const masked = o.mask ? o.mask.end(held) : held;
    const events = this.#events;
    const last = events ? Buffer.concat([masked ? events.push(masked) : Buffer.alloc(0), events.end()]) : masked;
    this.#writeHead();
    if (last && last.length > 0) this.#dst.end(last);
    else this.#dst.end();
    this.#settle();
  }

  error(err: unknown): void {
    if (this.#readingOn) return this.#stopReadingOn(err);
    if (this.#settled) return;
    this.#failure = err;
    this.#failHandlers(err);
    const dst = this.#dst;
    const trailer = this.#o.trailer;
    if (this.#head) {
      // Nothing went out: the caller answers with the error.
      this.#head = undefined;
      this.#src.destroy();
    } else if (trailer && !dst.destroyed && !dst.writableEnded) {
      this.#src.destroy();
      // The cut event and a tail the mask held back (the start of a credential) are dropped. Only an event too
      // large to hold went out in part: a blank line closes it, so the error event is at least parsed on its own.
      const atBoundary = this.#events?.atBoundary ?? true;
      dst.end((atBoundary ? '' : '\n\n') + trailer(err));
    } else cut(this.#src, dst);
    this.#settle();
  }

  /**
   * The response is over: if the body was still coming, the client left. The source is cut, or, when a handler asks
   * to read on for the usage at the end, read on within its bound while the exchange waits to settle. The relay's
   * promise resolves at once either way: forwarding is over for the client.
   */
  clientEnded(): void {
    if (this.#settled) return;
    const bound = readOnBound(this.#o.handlers);
    if (!bound) {
      this.#failHandlers(CLIENT_GONE);
      this.#settle();
      cut(this.#src, this.#dst);
      return;
    }
    this.#o.keep();
    let done!: () => void;
    this.#x.readOnForUsage(new Promise<void>((resolve) => (done = resolve)));
    // Not unref'd: a shutdown's drain of the upstream pool waits for this body anyway, and the bound ends it.
    const timer = setTimeout(() => this.#stopReadingOn(CLIENT_GONE), bound.ms);
    this.#readingOn = { left: bound.bytes, timer, done };
    this.#settle();
    if (!this.#dst.destroyed) this.#dst.destroy();
    // Nobody reads the response now: the source is read as fast as it comes.
    this.#waiting = false;
    this.#src.resume();
  }

  #readOnData(chunk: Buffer): void {
    const r = this.#readingOn!;
    r.left -= chunk.length;
    if (r.left < 0) return this.#stopReadingOn(CLIENT_GONE);
    try {
      for (const h of this.#o.handlers) {
        if (h.onData) chunk = h.onData(chunk);
        if (chunk.length === 0) return;
      }
    } catch (err) {
      this.#stopReadingOn(err);
    }
  }

  /** The body completed after the client left: the usage the handlers return is reported, as at a normal end. */
  #readOnEnd(): void {
    try {
      handlersRest(this.#o.handlers);
    } catch (err) {
      this.#reportFailedUsage();
      return this.#stopReadingOn(err);
    }
    this.#reportUsage();
    this.#doneReadingOn();
  }

  /**
   * A whole answer that a handler failed at its end (one it cannot translate) came, and the upstream charged for it:
   * its usage counts though the client gets an error. A stream failing there was cut short (a frame left incomplete):
   * its counts are partial, left to the estimate.
   */
  #reportFailedUsage(): void {
    if (!this.#o.trailer) this.#reportUsage();
  }

  /** The body will not complete: the handlers are told, and what they had read of its usage goes to the estimate. */
  #failHandlers(err: unknown): void {
    for (const h of this.#o.handlers) {
      h.onError?.(err);
      let partial: Usage | undefined;
      try {
        partial = h.partial?.();
      } catch {}
      if (partial) this.#x.reportPartialUsage(partial);
    }
  }

  /**
   * The usage the handlers return for a body that completed; a handler that fails to read it, or returns none (a
   * translated stream that ended in an error event), leaves it to the estimate with the counts it had read.
   */
  #reportUsage(): void {
    let usage: Usage | undefined;
    try {
      usage = handlersUsage(this.#o.handlers);
    } catch {}
    if (usage) return this.#x.reportUsage(usage);
    for (const h of this.#o.handlers) {
      let partial: Usage | undefined;
      try {
        partial = h.partial?.();
      } catch {}
      if (partial) this.#x.reportPartialUsage(partial);
    }
  }

  /** The bound passed, or the body failed: cut, and the exchange settles with its estimate. */
  #stopReadingOn(err: unknown): void {
    if (!this.#readingOn) return;
    this.#failHandlers(err);
    this.#src.destroy();
    this.#doneReadingOn();
  }

  #doneReadingOn(): void {
    const r = this.#readingOn;
    if (!r) return;
    this.#readingOn = undefined;
    clearTimeout(r.timer);
    r.done();
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    if (this.#onDrain) this.#dst.off('drain', this.#onDrain);
    this.#resolve(this.#failure);
  }
}
