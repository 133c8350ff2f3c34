// The bytes of an answer a usage reading needs: all of them up to a cap (what an estimate tokenizes), past it
// only the tail (where the usage object is). Copied into one buffer of its own rather than held as the chunks
// relayed: a chunk is often a small view of a larger socket buffer, and holding a few hundred of them per open
// stream can keep all those buffers alive.

/** The usage object sits in the last few KiB of every OpenAI-shaped answer. */
const TAIL_BYTES = 32 * 1024;
const FIRST_SIZE = 2 * 1024;
const EMPTY = Buffer.alloc(0);

export class AnswerBytes {
  readonly #keepAll: number;
  #buf: Buffer | undefined;
  #length = 0;
  /** Bytes seen in all. */
  total = 0;

  /** keepAll: bytes kept whole before only the tail is (0: the tail only). */
  constructor(keepAll: number) {
    this.#keepAll = keepAll;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.total > this.#keepAll && this.#length + chunk.length > 2 * TAIL_BYTES) {
      // Keep the last TAIL_BYTES of what is held plus this chunk.
      if (chunk.length >= TAIL_BYTES) {
        this.#ensure(TAIL_BYTES);
        chunk.copy(this.#buf!, 0, chunk.length - TAIL_BYTES);
        this.#length = TAIL_BYTES;
        return;
      }
      const keep = TAIL_BYTES - chunk.length;
      this.#buf!.copyWithin(0, this.#length - keep, this.#length);
      this.#length = keep;
    }
    this.#ensure(this.#length + chunk.length);
    chunk.copy(this.#buf!, this.#length);
    this.#length += chunk.length;
  }

  /** The bytes held, as text. */
  text(): string {
    return this.#buf ? this.#buf.toString('utf8', 0, this.#length) : '';
  }

  /** The last TAIL_BYTES held (or all, when fewer): where the usage object is. A view, valid until the next push. */
  tail(): Buffer {
    return this.#buf ? this.#buf.subarray(Math.max(0, this.#length - TAIL_BYTES), this.#length) : EMPTY;
  }

  #ensure(size: number): void {
    if (this.#buf && this.#buf.length >= size) return;
    let next = Math.max(FIRST_SIZE, (this.#buf?.length ?? 0) * 2);
    while (next < size) next *= 2;
    const grown = Buffer.allocUnsafe(next);
    if (this.#buf) this.#buf.copy(grown, 0, 0, this.#length);
    this.#buf = grown;
  }
}
