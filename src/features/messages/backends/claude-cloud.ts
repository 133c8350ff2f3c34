// Which cloud's own endpoint for Claude a Messages backend is, from its base URL and credential, and the request
// laid out for it. Anything else (Anthropic's API, Bedrock's Messages-shaped /anthropic endpoint, a proxy speaking
// the Messages API) takes the client's body as it is. Pure.
import type { CompiledBackend } from '../../../model/routing-table.js';
import type { Translated } from '../../../model/anthropic-errors.js';
import { bedrockClaudeRequest } from './bedrock-claude.js';
import type { ClaudeCall, CloudRequest } from './cloud-request.js';
import { vertexClaudeRequest } from './vertex-claude.js';

export type ClaudeCloud = 'vertex' | 'bedrock';

const VERTEX_MODELS = /\/publishers\/anthropic\/models$/;

/**
 * vertex: a base path ending in /publishers/anthropic/models (any host: a regional, global or Private Service
 * Connect endpoint). bedrock: Bedrock's runtime (its host, or a SigV4 credential for the bedrock service) at the
 * root, where InvokeModel lives. Undefined: the backend speaks the Messages API itself.
 */
export function claudeCloudOf(backend: Pick<CompiledBackend, 'origin' | 'basePath' | 'auth'>): ClaudeCloud | undefined {
  if (VERTEX_MODELS.test(backend.basePath)) return 'vertex';
  if (backend.basePath !== '') return undefined;
  const host = new URL(backend.origin).hostname.toLowerCase();
  const bedrockHost = host.startsWith('bedrock-runtime.') || host.includes('.bedrock-runtime.');
  const bedrockSigned = backend.auth.kind === 'awsSigV4' && backend.auth.service === 'bedrock';
  return bedrockHost || bedrockSigned ? 'bedrock' : undefined;
}

/** True for a backend that speaks the Messages API (`api: anthropic`): Anthropic's, a cloud's endpoint for Claude, a proxy. */
export function speaksClaude(backend: CompiledBackend): boolean {
  return backend.api === 'anthropic';
}

/** Each anthropic backend's cloud, once per compiled backend (a regex, and at the origin's root a URL parse); null: none. */
const clouds = new WeakMap<CompiledBackend, ClaudeCloud | null>();

/** Which cloud's own endpoint for Claude an `api: anthropic` backend is; undefined for Anthropic's API, a proxy, or another api. */
export function cloudOf(backend: CompiledBackend): ClaudeCloud | undefined {
  if (!speaksClaude(backend)) return undefined;
  let cloud = clouds.get(backend);
  if (cloud === undefined) clouds.set(backend, (cloud = claudeCloudOf(backend) ?? null));
  return cloud ?? undefined;
}

/** The call as the cloud takes it, or Anthropic's refusal (a body that is not an object, an operation the cloud lacks). */
export function claudeCloudRequest(cloud: ClaudeCloud, call: ClaudeCall): Translated<CloudRequest> {
  return cloud === 'vertex' ? vertexClaudeRequest(call) : bedrockClaudeRequest(call);
}
