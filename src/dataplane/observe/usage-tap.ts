// Token usage without buffering the response: the tap keeps only the last few KiB of the body as it streams
// past, and at the end reads the last `usage` object in that tail. OpenAI-shaped bodies put usage at the end
// (chat/embeddings JSON, the final chat chunk with stream_options.include_usage, response.completed), so the
// tail is enough; when it is not there, nothing is recorded.
import type { Usage } from '../../model/usage.js';
import type { Metrics } from '../../observability/metrics.js';
import type { AnswerStage, ExchangeTransform } from '../exchange/transform.js';

export interface TokenUsage {
  readonly input: number | undefined;
  readonly output: number | undefined;
}

const TAIL_BYTES = 16 * 1024;

const NO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0, estimated: false };

/** Holds the most recent TAIL_BYTES of a byte stream, dropping older chunks whole. */
export class TailBuffer {
  #chunks: Buffer[] = [];
  #size = 0;

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    while (this.#chunks.length > 1 && this.#size - this.#chunks[0]!.length >= TAIL_BYTES) {
      this.#size -= this.#chunks.shift()!.length;
    }
  }

  text(): string {
    const all = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#size);
    const start = Math.max(0, all.length - TAIL_BYTES * 2);
    return all.toString('utf8', start);
  }
}

const INPUT = /"(?:prompt_tokens|input_tokens)"\s*:\s*(\d+)/;
const OUTPUT = /"(?:completion_tokens|output_tokens)"\s*:\s*(\d+)/;

/** Pure: the token counts of the last non-null `usage` object in a JSON or SSE text, if any. */
export function extractUsage(text: string): TokenUsage | undefined {
  let at = text.lastIndexOf('"usage"');
  while (at >= 0) {
    const rest = text.slice(at + 7, at + 7 + 2048);
    if (/^\s*:\s*\{/.test(rest)) {
      const input = INPUT.exec(rest);
      const output = OUTPUT.exec(rest);
      if (input || output) {
        return { input: count(input?.[1]), output: count(output?.[1]) };
      }
    }
    at = at > 0 ? text.lastIndexOf('"usage"', at - 1) : -1;
  }
  return undefined;
}

/**
 * A token count as a safe integer, else undefined. The digits come from the upstream: 400 of them make
 * Infinity, which prom-client refuses by throwing (from a stream 'end' handler: a crashed process).
 */
function count(digits: string | undefined): number | undefined {
  if (digits === undefined) return undefined;
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * The usage tap as an exchange transform: on a successful JSON or event-stream answer it keeps the tail of what
 * the client gets and, when the body completes, feeds the token counts it finds to `gen_ai_client_token_usage`;
 * the first chunk of a stream feeds time to first token. Observes only: the bytes pass untouched.
 */
export function usageTap(metrics: Metrics): ExchangeTransform {
  return {
    answer({ exchange: x, statusCode, isStream, contentType }): AnswerStage | undefined {
      const wantsUsage = statusCode < 300 && (isStream || contentType.includes('json'));
      // Until the usage feature (issue 13) records every family's usage, the tap records what it reads, so token
      // limits settle: the counts found in a completed body, none for an error or a body that is not JSON. A JSON
      // or stream body without usage, or one cut short, records nothing: the limit keeps the whole reservation.
      if (!isStream && !wantsUsage) return { end: () => x.recordUsage(NO_USAGE) };
      const labels = { family: x.family, model: x.route.model };
      const tail = wantsUsage ? new TailBuffer() : undefined;
      let first = isStream;
      return {
        observe(chunk) {
          if (first) {
            first = false;
            metrics.timeToFirstToken.observe(labels, Number(process.hrtime.bigint() - x.start) / 1e9);
          }
          tail?.push(chunk);
        },
        end() {
          if (!tail) {
            x.recordUsage(NO_USAGE);
            return;
          }
          // Runs as the upstream body ends, before the client's response is finished: a throw here would leave the
          // client hanging. Usage metrics are best effort.
          try {
            const usage = extractUsage(tail.text());
            if (usage?.input !== undefined) metrics.tokenUsage.observe({ ...labels, type: 'input' }, usage.input);
            if (usage?.output !== undefined) metrics.tokenUsage.observe({ ...labels, type: 'output' }, usage.output);
            if (usage) x.recordUsage({ ...NO_USAGE, inputTokens: usage.input ?? 0, outputTokens: usage.output ?? 0 });
          } catch {
            // An upstream body the tap cannot account for is not the client's problem.
          }
        },
      };
    },
  };
}
