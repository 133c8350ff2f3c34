// The create calls that mint sealed ids, POST /v1/videos and POST /v1/responses, as exchange transforms. The
// answer's ids are sealed with the route, the backend that answered and the calling token; a previous_response_id
// in a Responses request body (the create, compact, input_tokens) is checked like any sealed id, unsealed for the
// upstream, and pins the request to the backend that stores the previous response.
import type { Answer, AnswerHandler, ExchangeTransform, Feature } from '../../dataplane/exchange/transform.js';
import type { CompiledToken } from '../../model/routing-table.js';
import type { SealContext } from './id-rewrite.js';
import { continuationBackend, resolveOwned } from './owned-object.js';
import { sealedErrors } from './sealed-errors.js';
import type { BackgroundCreate, IdSealer } from './sealed-id.js';
import { type SealedBody, sealingTransform } from './sealing-transforms.js';

/** Seals the ids of an answer from whichever backend ends up answering; `known` is the id the client presented. */
export function sealStage(
  body: SealedBody,
  sealer: IdSealer,
  token: CompiledToken,
  answer: Answer,
  known?: SealContext['known'],
  background?: BackgroundCreate,
): AnswerHandler | undefined {
  const ctx: SealContext = {
    sealer,
    model: answer.exchange.route.model,
    backend: answer.backend.name,
    owner: token.ref,
    ...(known ? { known } : {}),
    ...(background ? { background } : {}),
  };
  const rewrite = sealingTransform({ body, ctx }, answer.statusCode, answer.contentType, answer.progress);
  return rewrite ? { rewrite } : undefined;
}

/** The input tokens the usage feature estimates for a JSON request body of the Responses family. */
export type InputEstimate = (body: Buffer | undefined) => number;

/**
 * The sealed ids of the create calls: reads `previous_response_id` (unsealed for the upstream) and `background` (a
 * background response's id carries what its create recorded, `inputEstimate` of its body, for the call that sees it
 * finish: docs/usage-and-limits.md).
 */
export function sealedCreateFeature(sealer: IdSealer, inputEstimate: InputEstimate): Feature {
  return { reads: ['previous_response_id', 'background'], families: sealedCreateTransforms(sealer, inputEstimate) };
}

function sealedCreateTransforms(sealer: IdSealer, inputEstimate: InputEstimate): Feature['families'] {
  return {
    // A follow-up seals its answer itself (sealed-routes.ts), with the id the client presented.
    // A video's id carries its create's request id (no input: a video's record is its seconds), named by its credit.
    videos: (x, kind) =>
      kind.create ? { onResponseStart: (a) => sealStage('video', sealer, x.token, a, undefined, { inputTokens: 0, reqId: x.id }) } : undefined,
    responses: (x, kind) => {
      let members: Readonly<Record<string, string>> | undefined;
      let known: SealContext['known'];
      let background: BackgroundCreate | undefined;
      const t: ExchangeTransform = {
        prepare(plan) {
          // Answered before the model runs, the create records an estimate of its input (the usage feature's, made
          // the same way from the same body); a streamed one records its own usage at its end and is not marked.
          if (kind.create && !plan.stream && plan.raw('background') === 'true') background = { inputTokens: inputEstimate(plan.json), reqId: x.id };
          const prev = plan.member('previous_response_id');
          // Absent, null or not a string: nothing to unseal (a wrong type is the upstream's to reject). A follow-up's
          // plan reads no member: it names its object in the path (sealed-routes.ts).
          if (prev === undefined) return;
          // Only translated backends left: responses-chat continued a conversation the gateway kept (it narrows the
          // backends so), which names no response stored upstream.
          if (plan.backends.every((b) => b.api !== 'openai')) return;
          const owned = resolveOwned(x.table, x.token, sealer, 'response', prev);
          if (!owned) throw sealedErrors.notFound('response', 'previous_response_id');
          const backend = continuationBackend(owned, x.route);
          if (!backend) throw sealedErrors.cannotContinue(owned.route.model, x.route.model);
          // Spliced into the client's bytes for every backend body (duplicates of the member removed).
          members = { previous_response_id: JSON.stringify(owned.ref.upstreamId) };
          // The answer's previous_response_id is the client's id again, as presented.
          known = { upstreamId: owned.ref.upstreamId, sealedId: prev };
          plan.backends = [backend];
        },
        members: () => members,
        // The create answers with a Response, and compact with a compaction whose `id` is a response id, which a client
        // may chain on as previous_response_id: both sealed (a background marker only ever comes from a create).
        // input_tokens answers with a count (its error texts still quote the client's previous_response_id). A
        // follow-up, which consumes nothing, seals its answer itself.
        onResponseStart: (a) => sealStage(kind.consumes ? 'response' : 'none', sealer, x.token, a, known, background),
      };
      return t;
    },
  };
}
