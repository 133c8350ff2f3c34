// What a trace learns from the answer's body, as an exchange transform that only observes: the first chunk of a
// stream (time to first token), from the body's tail the model that answered, and with --trace-content the
// answer's content. Usage comes from the usage feature (Exchange.onUsage). Skipped when the request's trace is not
// recorded.
import type { AnswerStage, ExchangeTransform } from '../../dataplane/exchange/transform.js';
import { credentialsOf } from '../../dataplane/upstream/credentials.js';
import { OutputCollector } from './content.js';
import { ExchangeSpans } from './exchange-trace.js';

const MODEL_AT = /"model"\s*:\s*"([^"\\]{1,256})"/y;

/**
 * Pure: the last `"model": "…"` value in a JSON or SSE text (the answer names the model that served it). Searched
 * from the end: a JSON answer names it near its start, so a forward scan of every match read the whole tail.
 */
export function lastModel(text: string): string | undefined {
  for (let at = text.lastIndexOf('"model"'); at >= 0; at = at > 0 ? text.lastIndexOf('"model"', at - 1) : -1) {
    MODEL_AT.lastIndex = at;
    const m = MODEL_AT.exec(text);
    if (m) return m[1];
  }
  return undefined;
}

const TAIL_BYTES = 16 * 1024;

/** The last TAIL_BYTES or so of a body (whole chunks): a streamed or JSON answer names its model in every chunk or near its end. */
class Tail {
  #chunks: Buffer[] = [];
  #size = 0;

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    while (this.#chunks.length > 1 && this.#size - this.#chunks[0]!.length >= TAIL_BYTES) this.#size -= this.#chunks.shift()!.length;
  }

  text(): string {
    return Buffer.concat(this.#chunks, this.#size).toString('utf8');
  }
}

export function tracingTransform(): ExchangeTransform {
  return {
    answer({ exchange: x, backend, statusCode, isStream, contentType }): AnswerStage | undefined {
      const spans = x.trace;
      if (!(spans instanceof ExchangeSpans) || !spans.recording) return undefined;
      const readable = statusCode < 300 && (isStream || contentType.includes('json'));
      if (!isStream && !readable) return undefined;
      const tail = readable ? new Tail() : undefined;
      const content = readable && spans.content ? new OutputCollector(isStream) : undefined;
      let first = isStream;
      return {
        observe(chunk) {
          if (first) {
            first = false;
            spans.firstChunk();
          }
          tail?.push(chunk);
          content?.push(chunk);
        },
        end() {
          if (!tail) return;
          const model = lastModel(tail.text());
          if (model !== undefined) spans.answered(model);
          // The stage sees the body before the relay masks the backend's credentials: masked here too.
          const output = content?.text(credentialsOf(backend).texts);
          if (output !== undefined) spans.output(output);
        },
      };
    },
  };
}
