import { describe, expect, it } from 'vitest';
import { classifyUpstreamError, errorCode } from './attempt-outcome.js';

const err = (code: string, cause?: unknown) => Object.assign(new Error(code, cause ? { cause } : undefined), { code });

describe('classifyUpstreamError', () => {
  const cases: [string, unknown, string, string | undefined][] = [
    ['refused', err('ECONNREFUSED'), 'connect-failure', 'ECONNREFUSED'],
    ['reset', err('ECONNRESET'), 'connect-failure', 'ECONNRESET'],
    ['dns', err('ENOTFOUND'), 'connect-failure', 'ENOTFOUND'],
    ['tls', err('ERR_TLS_CERT_ALTNAME_INVALID'), 'connect-failure', 'ERR_TLS_CERT_ALTNAME_INVALID'],
    ['ssl', err('ERR_SSL_WRONG_VERSION_NUMBER'), 'connect-failure', 'ERR_SSL_WRONG_VERSION_NUMBER'],
    ['undici socket closed', err('UND_ERR_SOCKET'), 'connect-failure', 'UND_ERR_SOCKET'],
    ['connect timeout', err('UND_ERR_CONNECT_TIMEOUT'), 'connect-failure', 'UND_ERR_CONNECT_TIMEOUT'],
    ['headers timeout', err('UND_ERR_HEADERS_TIMEOUT'), 'timeout', undefined],
    ['wrapped by fetch', new TypeError('fetch failed', { cause: err('ECONNREFUSED') }), 'connect-failure', 'ECONNREFUSED'],
    ['unknown', new Error('weird'), 'connect-failure', 'other'],
  ];
  for (const [name, e, kind, code] of cases)
    it(name, () => {
      const o = classifyUpstreamError(e);
      expect(o.kind).toBe(kind);
      if (code !== undefined) expect(o).toMatchObject({ code });
    });

  it('trusts who aborted the signal over the error', () => {
    expect(classifyUpstreamError(err('ABORT_ERR'), 'client')).toEqual({ kind: 'aborted' });
    expect(classifyUpstreamError(err('ABORT_ERR'), 'timeout')).toEqual({ kind: 'timeout' });
  });

  it('finds codes in the cause chain', () => {
    expect(errorCode(new Error('a', { cause: new Error('b', { cause: err('EPIPE') }) }))).toBe('EPIPE');
    expect(errorCode(new AggregateError([err('ECONNREFUSED'), err('ENETUNREACH')]))).toBe('ECONNREFUSED');
    expect(errorCode('not an error')).toBeUndefined();
  });
});
