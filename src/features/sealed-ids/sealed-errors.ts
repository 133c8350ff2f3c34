// The errors of sealed-id calls. One not_found answer for every reason an id is refused (forged, tampered,
// another token's, model no longer allowed, backend gone): the message never says which, and never echoes
// the id, so an answer cannot be used to learn whether an id exists.
import type { SealedKind } from './sealed-id.js';
import { GatewayError } from '../../model/errors.js';

const NOUN: Readonly<Record<SealedKind, string>> = { video: 'video', response: 'response' };

export const sealedErrors = {
  notFound: (kind: SealedKind, param: string | null = null) => new GatewayError(404, `No ${NOUN[kind]} found with that id.`, { code: 'not_found', param }),
  listNotSupported: () =>
    new GatewayError(
      400,
      'Listing videos is not supported by this gateway: the upstream list cannot be filtered per API key. Keep the ids returned by POST /v1/videos and use GET /v1/videos/{id}.',
      { code: 'unsupported_endpoint' },
    ),
  cannotContinue: (previousModel: string, model: string) =>
    new GatewayError(
      400,
      `previous_response_id belongs to a conversation on model \`${previousModel}\`, which model \`${model}\` cannot continue (its backends keep no shared store). Use model \`${previousModel}\`.`,
      { code: 'invalid_previous_response', param: 'previous_response_id' },
    ),
};
