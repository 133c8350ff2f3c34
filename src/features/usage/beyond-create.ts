// What a background response generated beyond what its create recorded (pure). The create was answered before the
// model ran and recorded an estimate of its input; the response's final usage holds the upstream's exact counts of
// everything. The follow-up that sees it finished records the difference, so the two records add up to the
// upstream's counts: the create's estimate is taken off the input, from its uncached part first (which the
// estimate was priced as), and nothing goes below 0 (an estimate above the real input stands in the create's record).
import type { Usage } from '../../model/usage.js';

export function beyondCreate(final: Usage, createInputTokens: number): Usage {
  const inputTokens = Math.max(0, final.inputTokens - Math.max(0, createInputTokens));
  const cachedInputTokens = Math.min(final.cachedInputTokens, inputTokens);
  const out: Usage = { ...final, inputTokens, cachedInputTokens };
  const writes = final.cacheWriteInputTokens;
  if (writes === undefined) return out;
  const cacheWriteInputTokens = Math.min(writes, inputTokens - cachedInputTokens);
  const hour = final.cacheWrite1hInputTokens;
  return { ...out, cacheWriteInputTokens, ...(hour === undefined ? {} : { cacheWrite1hInputTokens: Math.min(hour, cacheWriteInputTokens) }) };
}
