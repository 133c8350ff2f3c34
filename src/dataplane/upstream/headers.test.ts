import { describe, expect, it } from 'vitest';
import { compileCredentials } from './credentials.js';
import { downstreamHeaders, upstreamRequestHeaders } from './headers.js';

const upstreamKey = compileCredentials([{ header: 'authorization', value: 'Bearer sk-upstream-key', secret: 'sk-upstream-key' }]);
const AS_IS = { keepLength: true, decoded: false, mask: [] };

describe('upstreamRequestHeaders', () => {
  it('drops hop-by-hop and credential headers, sets the backend key and asks for identity', () => {
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
      { credentials: upstreamKey.sent, contentType: 'application/json', contentLength: 12, requestId: 'rid' },
    );
    expect(out).toEqual({
      'user-agent': 'sdk',
      'openai-beta': 'assistants=v2',
      authorization: 'Bearer sk-upstream-key',
      'accept-encoding': 'identity',
      'content-type': 'application/json',
      'content-length': '12',
      'x-request-id': 'rid',
    });
  });

  it('sends no Authorization when the backend has no key', () => {
    const out = upstreamRequestHeaders({ authorization: 'Bearer client' }, { credentials: [], contentType: undefined, contentLength: 0, requestId: 'r' });
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
      AS_IS,
    );
    expect(out).toEqual({
      'content-type': 'text/event-stream',
      'content-length': '10',
      'x-ratelimit-remaining-requests': '99',
      'x-upstream-request-id': 'up-1',
    });
    expect(downstreamHeaders({ 'content-length': '10' }, { ...AS_IS, keepLength: false })).toEqual({});
  });

  it('drops Content-Encoding and Content-Length of a body it decoded', () => {
    const upstream = { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': '40' };
    expect(downstreamHeaders(upstream, { keepLength: false, decoded: true, mask: [] })).toEqual({ 'content-type': 'application/json' });
    expect(downstreamHeaders(upstream, AS_IS)).toEqual(upstream);
  });

  it('masks the backend’s credentials in header values and drops a header named after one', () => {
    const out = downstreamHeaders(
      {
        'www-authenticate': 'Bearer error="invalid_token", token="sk-upstream-key"',
        'x-echo': ['Bearer sk-upstream-key', 'ok'],
        'x-sk-upstream-key': '1',
        'x-request-id': 'sk-upstream-key',
        'content-length': '12',
      },
      { ...AS_IS, mask: upstreamKey.texts },
    );
    expect(out).toEqual({
      'www-authenticate': 'Bearer error="invalid_token", token="***************"',
      'x-echo': ['Bearer ***************', 'ok'],
      'x-upstream-request-id': '***************',
      'content-length': '12',
    });
  });
});
