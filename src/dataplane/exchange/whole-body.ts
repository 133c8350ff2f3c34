// The answer handler that remakes a whole body at its end (a translation, a whole answer told as a stream's events):
// it holds the body, up to a bound, passes nothing on before its flush, and holds the answer's head with it
// (`holdsBody`), so a body it cannot remake is answered with an error status rather than a 200 cut short.
import { GatewayError } from '../../model/errors.js';
import { isEventStreamBody } from '../stream/sse.js';
import type { AnswerHandler } from './transform.js';

const EMPTY = Buffer.alloc(0);

export abstract class WholeBody implements AnswerHandler {
  readonly edits = true;
  readonly holdsBody = true;
  readonly #max: number;
  #chunks: Buffer[] = [];
  #bytes = 0;
  /**
   * Set for a handler that takes a JSON answer to a stream request: a body that does not open with `{` is an event
   * stream its server labelled JSON, passed on as it comes (neither held nor remade). Undefined: not yet known.
   */
  #passing: boolean | undefined;

  constructor(maxBytes: number, passesEventStreams = false) {
    this.#max = maxBytes;
    this.#passing = passesEventStreams ? undefined : false;
  }

  onData(chunk: Buffer): Buffer {
    if (this.#passing === undefined) this.#passing = isEventStreamBody(chunk);
    if (this.#passing) return chunk;
    this.#bytes += chunk.length;
    if (this.#bytes > this.#max)
      throw new GatewayError(502, `The upstream answer is larger than ${this.#max} bytes, too large to ${this.purpose}.`, { code: 'upstream_error' });
    this.#chunks.push(chunk);
    return EMPTY;
  }

  flush(): Buffer | undefined {
    if (this.#passing) return undefined;
    return Buffer.from(this.remake(Buffer.concat(this.#chunks).toString('utf8')));
  }

  /** What the body is held for, as the error of one too large says it ("translate"). */
  protected abstract readonly purpose: string;

  /** The body to pass on, made from the whole text; a throw (a GatewayError) fails the answer. */
  protected abstract remake(text: string): string;
}

/** The whole body's JSON, or `otherwise` when it is not JSON (a cut body, an HTML page). */
export function jsonOr(text: string, otherwise: unknown): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return otherwise;
  }
}
