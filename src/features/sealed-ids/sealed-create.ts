// The create calls that mint sealed ids: POST /v1/videos and POST /v1/responses. The answer's ids are sealed
// with the route, the backend that answered and the calling token; a previous_response_id in a new
// Responses request is checked like any sealed id, unsealed for the upstream, and pins the request to the
// backend that stores the previous response.
import type { Family } from '../../model/families.js';
import type { CompiledRoute, CompiledToken } from '../../model/routing-table.js';
import type { ResponseTransform } from '../../dataplane/upstream/forward.js';
import { sealingTransform, type SealedBody } from './sealing-transforms.js';
import type { SealContext } from './id-rewrite.js';
import { continuationBackend, resolveOwned } from './owned-object.js';
import type { IdSealer } from './sealed-id.js';
import type { CreateHook } from '../../dataplane/handlers/family-handler.js';
import type { Payload } from '../../dataplane/request/payload.js';
import { sealedErrors } from './sealed-errors.js';

/** Seals the ids of an answer from whichever backend ends up answering. */
export function sealAnswer(body: SealedBody, sealer: IdSealer, route: CompiledRoute, token: CompiledToken, known?: SealContext['known']): ResponseTransform {
  return (info) =>
    sealingTransform(
      { body, ctx: { sealer, model: route.model, backend: info.backend.name, owner: token.key, ...(known ? { known } : {}) } },
      info.statusCode,
      String(info.headers['content-type'] ?? ''),
      info.progress,
    );
}

export function sealedCreateHooks(sealer: IdSealer): Partial<Record<Family, CreateHook>> {
  return {
    videos: ({ route, ctx }) => ({ transform: sealAnswer('video', sealer, route, ctx.token!) }),
    responses: ({ payload, route, ctx }) => {
      const prev = payload.kind === 'json' ? payload.json.string('previous_response_id') : undefined;
      // Absent, null or not a string: nothing to unseal (a wrong type is the upstream's to reject).
      if (payload.kind !== 'json' || prev === undefined) return { transform: sealAnswer('response', sealer, route, ctx.token!) };
      const owned = resolveOwned(ctx.table!, ctx.token!, sealer, 'response', prev);
      if (!owned) throw sealedErrors.notFound('response', 'previous_response_id');
      const backend = continuationBackend(owned, route);
      if (!backend) throw sealedErrors.cannotContinue(owned.route.model, route.model);
      // Spliced into the client's bytes for every backend body (duplicates of the member removed).
      const rewritten: Payload = { ...payload, overrides: { ...payload.overrides, previous_response_id: JSON.stringify(owned.ref.upstreamId) } };
      // The answer's previous_response_id is the client's id again, as presented.
      const transform = sealAnswer('response', sealer, route, ctx.token!, { upstreamId: owned.ref.upstreamId, sealedId: prev });
      return { payload: rewritten, backends: [backend], transform };
    },
  };
}
