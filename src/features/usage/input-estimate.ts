// The estimate of a request's input tokens, on its own: what the gateway answers where it counts tokens for a
// client itself (a Messages count_tokens request on a route that only translated backends serve).
import type { Family } from '../../model/families.js';
import { estimateInput } from './estimate.js';

/** The input tokens of a JSON request body of the family, as the usage estimate counts them. */
export async function estimateInputTokens(family: Family, body: Buffer): Promise<number> {
  return estimateInput(family, body);
}
