// The bytes of an answer a usage reading needs: all of them up to a cap (what an estimate tokenizes), past it
// only the tail (where the usage object is). Holds references to the chunks relayed, no copies.

/** The usage object sits in the last few KiB of every OpenAI-shaped answer. */
const TAIL_BYTES = 32 * 1024;

export class AnswerBytes {
  readonly #keepAll: number;
  #chunks: Buffer[] = [];
  #held = 0;
  /** Bytes seen in all. */
  total = 0;

  /** keepAll: bytes kept whole before only the tail is (0: the tail only). */
  constructor(keepAll: number) {
    this.#keepAll = keepAll;
  }

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#held += chunk.length;
    this.total += chunk.length;
    if (this.total <= this.#keepAll) return;
    while (this.#chunks.length > 1 && this.#held - this.#chunks[0]!.length >= TAIL_BYTES) this.#held -= this.#chunks.shift()!.length;
  }

  /** The bytes held, as text. */
  text(): string {
    const chunks = this.#chunks;
    return chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, this.#held).toString('utf8');
  }

  /** The last chunks holding at least TAIL_BYTES (or all there are), as text: where the usage object is. */
  tail(): string {
    const chunks = this.#chunks;
    let from = chunks.length;
    let bytes = 0;
    while (from > 0 && bytes < TAIL_BYTES) bytes += chunks[--from]!.length;
    if (from === chunks.length - 1) return chunks[from]!.toString('utf8');
    return Buffer.concat(chunks.slice(from), bytes).toString('utf8');
  }
}
