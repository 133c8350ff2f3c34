// Claude on Vertex AI: the Messages API with the model in the path and the API version in the body. The base URL is
// the publisher's model collection (…/v1/projects/P/locations/L/publishers/anthropic/models); a message is
// POST {base}/{model}:rawPredict, or :streamRawPredict for a stream, whose answer is Anthropic's SSE as it is;
// token counting is POST {base}/count-tokens:rawPredict with the model kept in the body. `anthropic-beta` stays a
// header (Vertex reads it there, as Anthropic's Vertex SDK sends it), narrowed to the backend's allowed betas. Pure.
import type { Translated } from '../../../model/anthropic-errors.js';
import { betaHeaderEdits } from './anthropic-betas.js';
import { type ClaudeCall, type CloudRequest, notAnObject, pathSegment } from './cloud-request.js';
import { TopLevelMembers } from './top-level-members.js';

/** The body's `anthropic_version` that Vertex requires (its only value so far). */
const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

const VERSION = JSON.stringify(VERTEX_ANTHROPIC_VERSION);

export function vertexClaudeRequest(call: ClaudeCall): Translated<CloudRequest> {
  const members = TopLevelMembers.read(call.body, ['model', 'anthropic_version']);
  if (!members) return notAnObject;
  const counting = call.operation === 'count_tokens';
  // The cloud's version replaces whatever a client wrote: one route may fail over between clouds.
  const body = counting
    ? members.edit(['model', 'anthropic_version'], { model: JSON.stringify(call.model), anthropic_version: VERSION })
    : members.edit(['model', 'anthropic_version'], { anthropic_version: VERSION });
  const path = counting ? '/count-tokens:rawPredict' : `/${pathSegment(call.model)}:${call.stream ? 'streamRawPredict' : 'rawPredict'}`;
  const betas = betaHeaderEdits(call.headers['anthropic-beta'], call.betas);
  return {
    ok: true,
    value: {
      path,
      body,
      contentType: 'application/json',
      dropHeaders: betas ? ['anthropic-version', ...betas.drop] : ['anthropic-version'],
      setHeaders: betas?.set ?? {},
      answer: 'anthropic',
    },
  };
}
