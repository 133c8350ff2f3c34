import { describe, expect, it } from 'vitest';
import type { BackendAuth, BackendParam, PathStyle } from '../../model/backend-auth.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import { upstreamPath } from './upstream-path.js';

const backend = (o: { basePath?: string; auth?: BackendAuth; query?: BackendParam[]; pathStyle?: PathStyle; model?: string }) =>
  ({ basePath: '/v1', auth: { kind: 'none' }, query: [], pathStyle: 'openai', model: 'gpt-4o', ...o }) as unknown as CompiledBackend;

describe('upstreamPath', () => {
  it('puts the family path under the base path, the client query kept', () => {
    expect(upstreamPath(backend({}), '/chat/completions')).toBe('/v1/chat/completions');
    expect(upstreamPath(backend({}), '/videos/v1/content?variant=thumbnail')).toBe('/v1/videos/v1/content?variant=thumbnail');
  });

  it("adds the backend's parameters, replacing a client's of the same name", () => {
    const b = backend({ query: [{ name: 'api-version', value: '2024-10-21', secret: false }] });
    expect(upstreamPath(b, '/embeddings')).toBe('/v1/embeddings?api-version=2024-10-21');
    expect(upstreamPath(b, '/videos/x/content?api-version=evil&variant=video')).toBe('/v1/videos/x/content?variant=video&api-version=2024-10-21');
    expect(upstreamPath(b, '/embeddings?api%2Dversion=evil')).toBe('/v1/embeddings?api-version=2024-10-21');
  });

  it("sends the backend's key parameter in place of a client's", () => {
    const b = backend({ auth: { kind: 'query', param: 'key', key: 'AIza/secret+1' } });
    expect(upstreamPath(b, '/chat/completions?key=client-try')).toBe('/v1/chat/completions?key=AIza%2Fsecret%2B1');
  });

  it("lays out Azure deployment paths from the backend's model, only for the operations Azure deploys", () => {
    const b = backend({
      basePath: '/openai',
      pathStyle: 'azureDeployments',
      model: 'gpt 4o/mini',
      query: [{ name: 'api-version', value: '2024-10-21', secret: false }],
    });
    expect(upstreamPath(b, '/chat/completions')).toBe('/openai/deployments/gpt%204o%2Fmini/chat/completions?api-version=2024-10-21');
    expect(upstreamPath(b, '/audio/speech')).toBe('/openai/deployments/gpt%204o%2Fmini/audio/speech?api-version=2024-10-21');
    expect(upstreamPath(b, '/responses')).toBe('/openai/responses?api-version=2024-10-21');
  });
});
