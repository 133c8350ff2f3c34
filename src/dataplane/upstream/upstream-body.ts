// The body of an upstream answer as undici's dispatcher delivers it: chunks handed straight to one consumer (the
// relay), with back-pressure through undici's request controller, and no stream of its own. undici's request()
// wraps every answer in a Readable (its state, its events and about five nextTicks per answer); in a loopback
// proxy counted with callgrind that was a large share of the client side's instructions. The paths
// that need a stream (decoding a compressed answer, retelling an error) get one with readable().
import { Readable } from 'node:stream';
import { errors } from 'undici';

/** Where a body's chunks go: every call happens at most once after end() or error(), never. */
export interface BodySink {
  data(chunk: Buffer): void;
  end(): void;
  error(err: unknown): void;
}

/** A body a consumer reads by attaching a sink: an upstream body, or a stream's end (streamSource). */
export interface BodySource {
  attach(sink: BodySink): void;
  pause(): void;
  resume(): void;
  /** Stops the body. With an error, the sink is told it; without, the sink hears nothing more. */
  destroy(err?: Error): void;
}

/** What undici's controller offers the body (RequestController, dispatcher API). */
export interface BodyController {
  pause(): void;
  resume(): void;
  abort(reason: unknown): void;
}

/** Bytes held for a consumer that has not attached yet, past which undici stops reading the socket. */
const HELD_BYTES = 64 * 1024;

export class UpstreamBody implements BodySource {
  readonly #controller: BodyController;
  #sink: BodySink | undefined;
  #held: Buffer[] | undefined;
  #heldBytes = 0;
  /** Ended, failed or destroyed: undici will deliver nothing more. */
  #done = false;
  #ended = false;
  #error: unknown;
  #paused = false;
  /** Read on after the client left (for the usage at its end): the client's abort no longer stops it. */
  #kept = false;

  constructor(controller: BodyController) {
    this.#controller = controller;
  }

  /** Bytes that arrived before a consumer attached (with the headers, typically: the whole of a small answer). */
  get heldBytes(): number {
    return this.#heldBytes;
  }

  /** Paused by its consumer (back-pressure): silence then is the consumer's, not the upstream's. */
  get paused(): boolean {
    return this.#paused;
  }

  // --- from undici (upstream-client.ts) ---

  push(chunk: Buffer): void {
    if (this.#sink) return this.#sink.data(chunk);
    if (this.#done) return;
    (this.#held ??= []).push(chunk);
    this.#heldBytes += chunk.length;
    if (this.#heldBytes >= HELD_BYTES) this.#controller.pause();
  }

  finish(): void {
    if (this.#done) return;
    this.#done = true;
    this.#ended = true;
    this.#sink?.end();
  }

  fail(err: unknown): void {
    if (this.#done) return;
    this.#done = true;
    this.#error = err;
    this.#sink?.error(err);
  }

  // --- for the consumer ---

  attach(sink: BodySink): void {
    if (this.#sink) throw new Error('an upstream body has one consumer');
    this.#sink = sink;
    const held = this.#held;
    this.#held = undefined;
    this.#heldBytes = 0;
    if (held) {
      for (const chunk of held) {
        if (this.#sink !== sink) return; // destroyed by the sink meanwhile
        sink.data(chunk);
      }
    }
    if (this.#sink !== sink) return;
    if (this.#ended) sink.end();
    else if (this.#done) sink.error(this.#error);
    else if (!this.#paused) this.#controller.resume();
  }

  pause(): void {
    this.#paused = true;
    if (!this.#done) this.#controller.pause();
  }

  resume(): void {
    this.#paused = false;
    if (!this.#done) this.#controller.resume();
  }

  destroy(err?: Error): void {
    const sink = this.#sink;
    this.#sink = undefined;
    this.#held = undefined;
    this.#heldBytes = 0;
    if (this.#done) return;
    this.#done = true;
    // undici tells the handler with onResponseError, which finds the body done and the sink gone.
    this.#controller.abort(err ?? new errors.RequestAbortedError());
    if (err) sink?.error(err);
  }

  /** The relay reads on after the client left, within its own bound: an abort for the client leaving is ignored. */
  keepAfterClientLeft(): void {
    this.#kept = true;
  }

  /** The attempt aborted after the answer came (the client left): stops the body, unless the relay keeps it. */
  abort(reason: Error): void {
    if (!this.#kept) this.destroy(reason);
  }

  /**
   * Drops the body. A small one (up to `limit` bytes) is read to its end, so that its keep-alive connection goes
   * back to the pool; a bigger or endless one is cut.
   */
  dump(limit: number): void {
    if (this.#sink || this.#heldBytes > limit) return this.destroy();
    let size = 0; // the held chunks come through data() too
    this.attach({
      data: (chunk) => {
        size += chunk.length;
        if (size > limit) this.destroy();
      },
      end: () => {},
      error: () => {},
    });
  }

  /** The body as a Readable, for stream consumers (decoders, the error retelling); reading it attaches it. */
  readable(): Readable {
    const stream = new Readable({
      read: () => this.resume(),
      destroy: (err, cb) => {
        this.destroy(err ?? undefined);
        cb(err);
      },
    });
    this.attach({
      data: (chunk) => {
        if (!stream.push(chunk)) this.pause();
      },
      end: () => stream.push(null),
      error: (err) => stream.destroy(err as Error),
    });
    return stream;
  }
}

/** The end of a stream chain (decoders, rewrites) as a body source for the relay. */
export function streamSource(stream: Readable): BodySource {
  return {
    attach(sink) {
      stream.on('error', (err) => sink.error(err));
      stream.once('end', () => sink.end());
      stream.on('data', (chunk: Buffer) => sink.data(chunk));
    },
    pause: () => stream.pause(),
    resume: () => stream.resume(),
    destroy: (err) => {
      if (!stream.destroyed) stream.destroy(err);
    },
  };
}
