// The Responses API's calls beside the create that take a Responses request body and route by its `model`:
// POST /v1/responses/compact (a model call that compacts a conversation) and POST /v1/responses/input_tokens (a
// token count). Served like the create (model routing, limits, usage); a `previous_response_id` in them is a
// sealed id, unsealed and pinned to its backend by the sealed-ids feature as in a create.
import type { FamilyCall } from './family-handler.js';

export const RESPONSES_CALLS: readonly FamilyCall[] = [
  // Generates (the upstream charges its tokens): counted as usage and under token limits.
  { path: '/responses/compact', kind: { create: false, consumes: true } },
  { path: '/responses/input_tokens', kind: { create: false, consumes: false } },
];
