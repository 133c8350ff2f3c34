import { describe, expect, it } from 'vitest';
import { classifyFailure, failureToError, isFailoverable } from './upstream-errors.js';

const err = (code: string) => Object.assign(new Error(code), { code });

describe('classifyFailure', () => {
  it.each([
    ['ECONNREFUSED', 'connect_error', 502],
    ['ECONNRESET', 'connect_error', 502],
    ['UND_ERR_SOCKET', 'connect_error', 502],
    ['UND_ERR_CONNECT_TIMEOUT', 'connect_timeout', 504],
    ['UND_ERR_HEADERS_TIMEOUT', 'timeout', 504],
    ['SOMETHING_ELSE', 'error', 502],
  ])('%s → %s', (code, kind, status) => {
    expect(classifyFailure(err(code), false)).toBe(kind);
    expect(failureToError(classifyFailure(err(code), false)).status).toBe(status);
  });

  it('sees through AggregateError (happy eyeballs)', () => {
    expect(classifyFailure(new AggregateError([err('ECONNREFUSED'), err('ECONNREFUSED')]), false)).toBe('connect_error');
  });

  it('a client abort wins over anything else', () => {
    expect(classifyFailure(err('ECONNRESET'), true)).toBe('aborted');
    expect(classifyFailure(err('UND_ERR_ABORTED'), false)).toBe('aborted');
  });

  it('fails over only on connection failures', () => {
    expect(isFailoverable('connect_error')).toBe(true);
    expect(isFailoverable('connect_timeout')).toBe(true);
    expect(isFailoverable('timeout')).toBe(false);
    expect(isFailoverable('error')).toBe(false);
  });
});
