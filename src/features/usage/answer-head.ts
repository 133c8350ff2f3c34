// The first bytes of an answer, for what a JSON answer states before its bulk: a verbose transcription's `duration`
// comes before its text and segments, which push it out of a long answer's tail (OpenAI's order). Pure.

export class AnswerHead {
  readonly #max: number;
  readonly #chunks: Buffer[] = [];
  #length = 0;

  constructor(max: number) {
    this.#max = max;
  }

  push(chunk: Buffer): void {
    if (this.#length >= this.#max) return;
    // A copy: the chunk's memory may be reused once it has been relayed.
    const part = Buffer.from(chunk.subarray(0, this.#max - this.#length));
    this.#chunks.push(part);
    this.#length += part.length;
  }

  /** The bytes held, as text (a character cut at the end reads as a replacement character). */
  text(): string {
    return Buffer.concat(this.#chunks).toString('utf8');
  }
}
