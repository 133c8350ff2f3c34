// POST /v1/messages/count_tokens: the Messages API's token count, on routes that serve the messages family. A
// native backend counts with the model's own tokenizer, so the request goes to the route's native backends (their
// /messages/count_tokens, Vertex's count-tokens:rawPredict) when it has any; a route served only through chat
// completions or Bedrock's InvokeModel has no such endpoint upstream, and gets the gateway's own tokenizer estimate in
// Anthropic's answer shape, `{"input_tokens": N}`, for a request the translation takes (else 400, as create).
// It consumes nothing: usage records none and token limits never refuse it (it still counts as a request).
import type { FamilyCall } from '../../dataplane/handlers/family-handler.js';
import { GatewayError } from '../../model/errors.js';
import { countTokensRefusal } from './messages-to-chat.js';
import { countsTokens } from './messages-transform.js';

export const COUNT_TOKENS_PATH = '/messages/count_tokens';

/** The count_tokens call; `estimate` counts a Messages body's input tokens with the gateway's tokenizer. */
export function countTokensCall(estimate: (body: Buffer) => Promise<number>): FamilyCall {
  return {
    path: COUNT_TOKENS_PATH,
    kind: { create: false, consumes: false },
    local: async (_x, plan) => {
      const native = plan.backends.filter(countsTokens);
      if (native.length > 0) {
        plan.backends = native;
        return undefined;
      }
      // Refused as create would refuse it: Anthropic's own count_tokens checks the request too.
      const refusal = countTokensRefusal(JSON.parse(plan.json!.toString('utf8')));
      if (refusal) throw new GatewayError(400, refusal, { code: 'invalid_request' });
      return { input_tokens: await estimate(plan.json!) };
    },
  };
}
