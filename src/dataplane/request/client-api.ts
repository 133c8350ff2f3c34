// Which API a client speaks, for the shape of the gateway's own answers to it: Anthropic's for the Messages API
// (its paths, or any request that carries anthropic-version, as Anthropic's SDKs and Claude Code send on every
// call), OpenAI's otherwise. Pure.
import type { Family } from '../../model/families.js';

export type ClientApi = 'openai' | 'anthropic';

export function clientApiOf(path: string, family: Family | undefined, anthropicVersion: unknown): ClientApi {
  if (family === 'messages' || path === '/v1/messages' || path.startsWith('/v1/messages/')) return 'anthropic';
  return anthropicVersion === undefined ? 'openai' : 'anthropic';
}
