// Usage on the follow-ups of a background response (its retrieve, streamed or not, and its cancel). A background
// create is answered `queued` and recorded then, with an estimate of its input; what the model then generates is
// seen only by a later call that shows the response finished. The first such call, in all replicas, records it: its
// own usage record (the follow-up's access line) holds the final usage beyond the create's (beyond-create.ts),
// marked `background` with the response's id and the create's request id, priced, counted in the usage metrics,
// and settled on the creator's limits like any request's usage (the limits feature reads the mark). Once: the
// response is claimed (`claimOnce`, a key in the limits store) before it is recorded, and a later call finds it
// claimed and records nothing, as does a call that shows it unfinished or could not be read to its end.
import type { Answer, AnswerHandler, BackgroundFollowUp, ExchangeTransform } from '../../dataplane/exchange/transform.js';
import { AnswerTail } from '../../dataplane/stream/sse.js';
import type { Usage } from '../../model/usage.js';
import { beyondCreate } from './beyond-create.js';
import { ResponseStatus } from './response-status.js';
import { ResponsesToolCounter } from './server-tools.js';
import { isEmpty, lastUsageObject, reportedCounts, toUsage } from './usage-object.js';

/** True the first time a response (its claim key) is claimed, in all replicas sharing the store; false after. */
export type ClaimOnce = (claimKey: string) => Promise<boolean>;

export class BackgroundCompletion implements ExchangeTransform {
  readonly #bg: BackgroundFollowUp;
  readonly #claimOnce: ClaimOnce;
  #reader: CompletionReader | undefined;
  #ended = false;

  constructor(bg: BackgroundFollowUp, claimOnce: ClaimOnce) {
    this.#bg = bg;
    this.#claimOnce = claimOnce;
  }

  onResponseStart(a: Answer): AnswerHandler | undefined {
    if (a.statusCode < 200 || a.statusCode >= 300) return undefined;
    const reader = new CompletionReader(a.isStream);
    this.#reader = reader;
    return {
      onData: (chunk) => {
        reader.push(chunk);
        return chunk;
      },
      // Recorded once the response is over (unreported): the claim asks the store, which nothing on the relay waits for.
      onEnd: () => {
        this.#ended = true;
        return undefined;
      },
    };
  }

  /** The record of what the response generated, when this call read it finished and is the first to claim it. */
  async unreported(): Promise<Usage | undefined> {
    const final = this.#ended ? this.#reader?.final() : undefined;
    if (!final) return undefined;
    const bg = this.#bg;
    if (!(await this.#claimOnce(bg.claimKey))) return undefined;
    return { ...beyondCreate(final, bg.create.inputTokens), background: { responseId: bg.responseId, createReqId: bg.create.reqId } };
  }
}

/** Reads a Response answer for its status, its usage (the last usage object, at its end) and its searches. */
class CompletionReader {
  readonly #status: ResponseStatus;
  readonly #tail = new AnswerTail(0);
  readonly #tools: ResponsesToolCounter;

  constructor(isStream: boolean) {
    this.#status = new ResponseStatus(isStream);
    this.#tools = new ResponsesToolCounter(isStream);
  }

  push(chunk: Buffer): void {
    this.#status.push(chunk);
    this.#tail.push(chunk);
    this.#tools.push(chunk);
  }

  /** The response's final usage (the upstream's counts), when the answer showed it finished with one. */
  final(): Usage | undefined {
    if (!this.#status.final) return undefined;
    const usage = lastUsageObject(this.#tail.tail());
    const reported = usage ? reportedCounts(usage) : undefined;
    if (!reported || isEmpty(reported)) return undefined;
    const u = toUsage(reported, false);
    const calls = this.#tools.calls();
    return calls ? { ...u, serverToolCalls: calls } : u;
  }
}
