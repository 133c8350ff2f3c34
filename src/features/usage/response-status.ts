// The status of a Response as its answer passes: the top-level `status` of a Response object (a retrieve's or a
// cancel's JSON), or the `response.status` of the lifecycle events of a stream (a streamed retrieve), the last one
// seen. Read with the same field scanners that seal ids (no body is held or parsed), only on the follow-ups of a
// background response.
import { ChunkSplice, FieldPaths, JsonFieldScanner, type ReplaceValue } from '../../dataplane/stream/json-field-scan.js';
import { SseDataScanner } from '../../dataplane/stream/sse-field-scan.js';

const BODY = new FieldPaths([['status']]);
const EVENTS = new FieldPaths([['response', 'status']]);

/** The statuses a response ends in: what it generated is final in its usage. */
const FINAL = new Set(['completed', 'incomplete', 'failed', 'cancelled']);

export class ResponseStatus {
  #status: string | undefined;
  #unreadable = false;
  readonly #json: JsonFieldScanner | undefined;
  readonly #sse: SseDataScanner | undefined;
  readonly #splice = new ChunkSplice();

  constructor(isStream: boolean) {
    // Observes only: every value is kept as it came.
    const seen: ReplaceValue = (_field, literal) => {
      const status: unknown = JSON.parse(literal);
      if (typeof status === 'string') this.#status = status;
      return undefined;
    };
    if (isStream) this.#sse = new SseDataScanner(EVENTS, seen);
    else this.#json = new JsonFieldScanner(BODY, seen);
  }

  push(chunk: Buffer): void {
    if (this.#unreadable) return;
    const splice = this.#splice;
    try {
      splice.begin(chunk);
      if (this.#sse) this.#sse.push(chunk, splice);
      else this.#json!.scan(chunk, 0, chunk.length, splice);
      splice.finish();
    } catch {
      // A status the scanner will not hold (over 8 KiB) or cannot read: this answer is not recorded, and never failed
      // for it (a later call may record the response).
      this.#unreadable = true;
    }
  }

  /** The last status seen. */
  get status(): string | undefined {
    return this.#status;
  }

  /** The response has ended: its usage is what it generated. */
  get final(): boolean {
    return !this.#unreadable && this.#status !== undefined && FINAL.has(this.#status);
  }
}
