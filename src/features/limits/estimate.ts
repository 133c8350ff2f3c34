// What a request reserves on token limits before the call: a cheap, conservative bound, corrected when the real
// count settles it. No tokenizer on the hot path (one costs 30-45 us per KB here): every BPE tokenizer in use
// emits tokens of at least one byte of text, and a JSON body holds its text in at least as many bytes (escapes
// only add bytes), with more than enough structure bytes per message to cover the chat template's few tokens.
// So the body's size bounds its input tokens for text. Inputs priced apart from their bytes (an image by URL)
// can cost more and are charged in full at settlement. Pure.
import type { RequestPlan } from '../../dataplane/exchange/transform.js';
import type { Family } from '../../model/families.js';

/** Families that generate tokens and so reserve a maximum output. */
const GENERATES = new Set<Family>(['chat.completions', 'responses', 'messages']);
/** Families whose input is JSON text counted in tokens. */
const TEXT_INPUT = new Set<Family>(['chat.completions', 'responses', 'embeddings', 'messages']);

/** The members that cap a request's output (read through the plan; declared by the limits feature). */
export const MAX_OUTPUT_MEMBERS: readonly string[] = ['max_completion_tokens', 'max_tokens', 'max_output_tokens'];

/** What a request reserves: its body's bytes as the input bound, and its largest output. */
export interface ReservedUse {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

export function reservedUse(family: Family, plan: RequestPlan, defaultMaxOutput: number): ReservedUse {
  return {
    inputTokens: TEXT_INPUT.has(family) ? plan.bytes : 0,
    outputTokens: GENERATES.has(family) ? maxOutput(plan, defaultMaxOutput) : 0,
  };
}

/**
 * The request's own cap on output (`max_completion_tokens` or the older `max_tokens` for chat, `max_tokens` for
 * messages, `max_output_tokens` for responses; the largest when several are given), else the route's default.
 */
function maxOutput(plan: RequestPlan, fallback: number): number {
  let max: number | undefined;
  for (const name of MAX_OUTPUT_MEMBERS) {
    const n = plan.integer(name);
    if (n !== undefined && (max === undefined || n > max)) max = n;
  }
  return max ?? fallback;
}
