import { describe, expect, it } from 'vitest';
import { downstreamHeaders, upstreamRequestHeaders } from './headers.js';

describe('upstreamRequestHeaders', () => {
  it('drops hop-by-hop and credential headers and sets the backend key', () => {
    const out = upstreamRequestHeaders(
      {
        host: 'gw',
        authorization: 'Bearer client',
        'api-key': 'client',
        'x-api-key': 'client',
        connection: 'keep-alive, x-private',
        'x-private': '1',
        'transfer-encoding': 'chunked',
        'content-length': '999',
        'accept-encoding': 'gzip',
        'user-agent': 'sdk',
        'openai-beta': 'assistants=v2',
      },
      { apiKey: 'upstream', contentType: 'application/json', contentLength: 12, requestId: 'rid' },
    );
    expect(out).toEqual({
      'user-agent': 'sdk',
      'openai-beta': 'assistants=v2',
      authorization: 'Bearer upstream',
      'content-type': 'application/json',
      'content-length': '12',
      'x-request-id': 'rid',
    });
  });

  it('sends no Authorization when the backend has no key', () => {
    const out = upstreamRequestHeaders({ authorization: 'Bearer client' }, { apiKey: undefined, contentType: undefined, contentLength: 0, requestId: 'r' });
    expect(out['authorization']).toBeUndefined();
  });
});

describe('downstreamHeaders', () => {
  it('keeps content headers, drops hop-by-hop and account headers, renames the upstream request id', () => {
    const out = downstreamHeaders(
      {
        'content-type': 'text/event-stream',
        'content-length': '10',
        'transfer-encoding': 'chunked',
        connection: 'keep-alive',
        'keep-alive': 'timeout=5',
        'set-cookie': ['a=b'],
        'openai-organization': 'org-upstream',
        'x-request-id': 'up-1',
        'x-ratelimit-remaining-requests': '99',
      },
      true,
    );
    expect(out).toEqual({
      'content-type': 'text/event-stream',
      'content-length': '10',
      'x-ratelimit-remaining-requests': '99',
      'x-upstream-request-id': 'up-1',
    });
    expect(downstreamHeaders({ 'content-length': '10' }, false)).toEqual({});
  });
});
