// The credit of a video that failed. A video create is recorded (and charged) when it is answered, by its seconds;
// the upstream does not bill a video whose generation failed. The first retrieve (GET /v1/videos/{id}), in all
// replicas, that shows the video `failed` records a credit: its own usage record (the retrieve's access line) holds
// the video's seconds, marked `credit` with the video's id and its create's request id, and is priced negative
// (usage-cost.ts), which money limits charge like a background response's record. Once: claimed by the same
// `claimOnce` as a background response, under a key of its own.
import type { Answer, AnswerHandler, ExchangeTransform, VideoFollowUp } from '../../dataplane/exchange/transform.js';
import type { Usage } from '../../model/usage.js';
import type { ClaimOnce } from './background-completion.js';
import { lastSeconds } from './usage-object.js';

/** A video object is a few hundred bytes: one larger is not read (and credits nothing). */
const MAX_VIDEO_BYTES = 64 * 1024;
const FAILED = /"status"\s*:\s*"failed"/;

export class VideoFailure implements ExchangeTransform {
  readonly #video: VideoFollowUp;
  readonly #claimOnce: ClaimOnce;
  readonly #chunks: Buffer[] = [];
  #bytes = 0;
  #ended = false;

  constructor(video: VideoFollowUp, claimOnce: ClaimOnce) {
    this.#video = video;
    this.#claimOnce = claimOnce;
  }

  onResponseStart(a: Answer): AnswerHandler | undefined {
    if (a.statusCode < 200 || a.statusCode >= 300 || !a.contentType.toLowerCase().includes('json')) return undefined;
    return {
      onData: (chunk) => {
        this.#bytes += chunk.length;
        if (this.#bytes <= MAX_VIDEO_BYTES) this.#chunks.push(chunk);
        return chunk;
      },
      onEnd: () => {
        this.#ended = this.#bytes <= MAX_VIDEO_BYTES;
        return undefined;
      },
    };
  }

  /** The credit, when this call read the video failed (with its seconds) and is the first to claim it. */
  async unreported(): Promise<Usage | undefined> {
    if (!this.#ended) return undefined;
    const text = Buffer.concat(this.#chunks).toString('utf8');
    const seconds = FAILED.test(text) ? lastSeconds(text) : undefined;
    if (!seconds) return undefined;
    const v = this.#video;
    if (!(await this.#claimOnce(v.claimKey))) return undefined;
    const credit = { videoId: v.videoId, ...(v.createReqId ? { createReqId: v.createReqId } : {}) };
    return { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0, seconds, estimated: false, credit };
  }
}
