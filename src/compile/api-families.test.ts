import { describe, expect, it } from 'vitest';
import { compile } from './compile.js';
import type { RawObject } from './resources.js';

const routeWith = (name: string, endpoints: string[] | undefined, api: string): RawObject => ({
  apiVersion: 'modelgateway.io/v1alpha1',
  kind: 'ModelRoute',
  metadata: { name, namespace: 'default' },
  spec: { ...(endpoints ? { endpoints } : {}), backends: [{ name: 'claude', api, baseURL: 'https://api.anthropic.com/v1' }] },
});
const warningsOf = (o: RawObject) => compile([{ object: o }]).statuses.find((s) => s.ref === `ModelRoute/default/${o.metadata!.name}`)!.warnings;

describe('a route listing families its api: anthropic backend cannot serve', () => {
  it('warns, naming the backend and the families', () => {
    expect(warningsOf(routeWith('r', ['chat.completions', 'messages', 'embeddings', 'responses', 'images.generations'], 'anthropic'))).toEqual([
      'backend "claude": api: anthropic serves only messages, and chat.completions and responses (translated), not embeddings, images.generations; those requests fail over to the route\'s other backends, or fail',
    ]);
  });
  it('is quiet for messages, chat completions and responses, for another api, and when the route lists no endpoints', () => {
    expect(warningsOf(routeWith('a', ['chat.completions', 'messages', 'responses'], 'anthropic'))).toEqual([]);
    expect(warningsOf(routeWith('b', ['embeddings'], 'openai'))).toEqual([]);
    expect(warningsOf(routeWith('c', undefined, 'anthropic'))).toEqual([]);
  });
});
