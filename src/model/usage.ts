// What one request consumed. The usage feature records it once per routed request, when the response is over;
// the limits feature settles its reservations from it, and the usage log record and metrics report it.

export interface Usage {
  /**
   * Token counts; 0 where the family has none. inputTokens is ALL input, as OpenAI counts prompt tokens: for an
   * Anthropic answer, input_tokens + cache_read_input_tokens + cache_creation_input_tokens.
   */
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Part of inputTokens the upstream served from its prompt cache. */
  readonly cachedInputTokens: number;
  /**
   * Part of inputTokens the upstream wrote to its prompt cache (Anthropic's cache_creation_input_tokens, billed
   * above plain input); absent where the upstream does not report cache writes, which means 0.
   */
  readonly cacheWriteInputTokens?: number;
  /** Part of cacheWriteInputTokens written for a 1-hour lifetime (Anthropic's ephemeral_1h_input_tokens); default 0. */
  readonly cacheWrite1hInputTokens?: number;
  /** Part of outputTokens spent on reasoning. */
  readonly reasoningTokens: number;
  /**
   * Parts of inputTokens and outputTokens that are image or audio tokens, billed at their own prices (gpt-image-1's
   * input_tokens_details.image_tokens and output tokens, the audio_tokens of audio chat models and gpt-4o-transcribe);
   * absent means 0. A token read from the cache is priced as cached whatever its kind: these parts are priced
   * out of the uncached input only (model/cost.ts).
   */
  readonly imageInputTokens?: number;
  readonly imageOutputTokens?: number;
  readonly audioInputTokens?: number;
  readonly audioOutputTokens?: number;
  /** Audio or video seconds, where the family is measured in time and the length is known. */
  readonly seconds?: number;
  /** Input characters, where the family is measured in characters (speech). */
  readonly characters?: number;
  /** Images generated or edited, with the size and quality the request named (for per-image prices). */
  readonly images?: ImageCount;
  /**
   * Calls of tools the upstream ran itself and bills per call: web searches (Anthropic's
   * usage.server_tool_use.web_search_requests, a Responses answer's web_search_call items), web fetches, file
   * searches (file_search_call items). Absent means none.
   */
  readonly serverToolCalls?: ServerToolCalls;
  /** True when any count is the gateway's estimate rather than the upstream's report. */
  readonly estimated: boolean;
  /**
   * What the request cost at the prices of the backend that answered (model/cost.ts), set as the usage settles:
   * everything that reads the settled usage (the usage record, metrics, the span, money limits) reads this figure.
   */
  readonly cost?: UsageCost;
  /**
   * Set on the record of what a background response generated beyond its create's record, made by the follow-up
   * call that first saw it finished (docs/usage-and-limits.md); absent on every other record.
   */
  readonly background?: BackgroundRecord;
  /**
   * Set on the credit of a video that failed, made by the retrieve that first saw it failed: its seconds are what the
   * create was charged for, and its cost is negative (docs/usage-and-limits.md); absent on every other record.
   */
  readonly credit?: CreditRecord;
}

interface CreditRecord {
  /** The video's id, as its client knows it. */
  readonly videoId: string;
  /** The request id of its create, where its id carries it. */
  readonly createReqId?: string;
}

interface BackgroundRecord {
  /** The response's id, as its client knows it. */
  readonly responseId: string;
  /** The request id of its create, whose record holds the input estimate this record completes. */
  readonly createReqId: string;
}

export interface UsageCost {
  /**
   * Micro-units of the gateway's currency, the exact sum rounded once. When `known` is false, only what could be
   * priced (a lower bound): never report it as the cost.
   */
  readonly micros: number;
  /** False when the backend sets no pricing, or not a price this usage needed. */
  readonly known: boolean;
  /** ISO 4217 code of the gateway's one currency (serve --currency). */
  readonly currency: string;
}

export interface ImageCount {
  readonly count: number;
  readonly size?: string;
  readonly quality?: string;
}

export interface ServerToolCalls {
  readonly webSearch?: number;
  readonly webFetch?: number;
  readonly fileSearch?: number;
  /** The request could run such tools and the answer could not be read for them (cut short, or too long): unknown. */
  readonly uncounted?: true;
}
