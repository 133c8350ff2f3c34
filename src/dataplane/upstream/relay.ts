// The relay of an answer's body to the client: chunk by chunk with back-pressure, through the answer stages' edits
// and observers and the credential mask, under the body's deadlines; the client leaving cuts the source, and an
// event stream the upstream breaks off ends with an error event rather than a cut connection.
import type { Response } from 'express';
import type { Routed } from '../exchange/exchange.js';
import type { AnswerStage, ChunkEditor } from '../exchange/transform.js';
import type { BodyDeadlines } from './body-deadlines.js';
import type { CredentialMask } from './credential-mask.js';
import type { BodySink, BodySource } from './upstream-body.js';

export interface RelayOptions {
  /** When the source fails (event streams): the last event to send before ending cleanly. */
  readonly trailer: ((err: unknown) => string) | undefined;
  /** Masks the backend's credentials in every byte the client gets. */
  readonly mask: CredentialMask | undefined;
  /** The transforms' synchronous edits, in order, before the observers. */
  readonly editors: readonly ChunkEditor[];
  /** The transforms' observers: each chunk (before masking), then end() when the body completed. */
  readonly observers: readonly AnswerStage[];
  readonly watch: BodyDeadlines;
}

/**
 * Relays src to dst with back-pressure (as src.pipe(dst) would), passing every chunk to the observers and through
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
    const r = new Relay(src, dst, o, resolve);
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

/** What the editors held back at the end, each one's rest passed through the editors after it; undefined: nothing. */
function editorsRest(editors: readonly ChunkEditor[]): Buffer | undefined {
  let held: Buffer | undefined;
  for (const e of editors) {
    const through = held ? e.push(held) : undefined;
    const rest = e.end();
    held = through?.length ? (rest.length ? Buffer.concat([through, rest]) : through) : rest.length ? rest : undefined;
  }
  return held;
}

/** One relay's state, and the source's sink (methods on one object rather than a closure each). */
class Relay implements BodySink {
  readonly #src: BodySource;
  readonly #dst: Response;
  readonly #o: RelayOptions;
  readonly #resolve: (failure: unknown) => void;
  #settled = false;
  #failure: unknown;
  #lastByte = 0x0a;
  #prevByte = 0x0a;
  #waiting = false;
  #onDrain: (() => void) | undefined;

  constructor(src: BodySource, dst: Response, o: RelayOptions, resolve: (failure: unknown) => void) {
    this.#src = src;
    this.#dst = dst;
    this.#o = o;
    this.#resolve = resolve;
  }

  data(chunk: Buffer): void {
    if (this.#settled) return;
    const o = this.#o;
    o.watch.touch();
    for (const e of o.editors) chunk = e.push(chunk);
    if (chunk.length === 0) return;
    for (const s of o.observers) s.observe?.(chunk);
    const out = o.mask ? o.mask.push(chunk) : chunk;
    if (out.length === 0) return;
    this.#prevByte = out.length >= 2 ? out[out.length - 2]! : this.#lastByte;
    this.#lastByte = out[out.length - 1]!;
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
    if (this.#settled) return;
    const o = this.#o;
    const held = o.editors.length > 0 ? editorsRest(o.editors) : undefined;
    if (held) for (const s of o.observers) s.observe?.(held);
    for (const s of o.observers) s.end?.();
    const last = o.mask ? o.mask.end(held) : held;
    if (last && last.length > 0) this.#dst.end(last);
    else this.#dst.end();
    this.#settle();
  }

  error(err: unknown): void {
    if (this.#settled) return;
    this.#failure = err;
    const dst = this.#dst;
    const trailer = this.#o.trailer;
    if (trailer && !dst.destroyed && !dst.writableEnded) {
      this.#src.destroy();
      // Close a half-sent event first so the error event is parsed on its own. A tail the mask held back is
      // dropped: it is the start of a credential or of a cut event.
      const atBoundary = this.#prevByte === 0x0a && this.#lastByte === 0x0a;
      dst.end((atBoundary ? '' : '\n\n') + trailer(err));
    } else cut(this.#src, dst);
    this.#settle();
  }

  /** The response is over: if the body was still coming, the client left and the source is cut. */
  clientEnded(): void {
    if (this.#settled) return;
    this.#settle();
    cut(this.#src, this.#dst);
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    if (this.#onDrain) this.#dst.off('drain', this.#onDrain);
    this.#resolve(this.#failure);
  }
}
