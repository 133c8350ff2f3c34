import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMEOUTS, type RetryPolicy } from '../../model/routing-table.js';
import {
  attemptTimeouts,
  decide,
  finalError,
  CREDENTIALS_CODE,
  SHUTDOWN_CODE,
  healthVerdict,
  isFailoverOutcome,
  outcomeLabel,
  parseRetryAfter,
  requestBudgetMs,
  type AttemptOutcome,
  type AttemptState,
} from './retry-policy.js';

const policy: RetryPolicy = {
  attempts: 3,
  budgetMs: 10_000,
  onConnectFailure: true,
  onTimeout: true,
  statuses: new Set([429, 500, 502, 503, 504]),
};
const fresh: AttemptState = { attemptsMade: 1, backendsLeft: 2, elapsedMs: 100, clientGone: false, responseStarted: false };
const status = (s: number): AttemptOutcome => ({ kind: 'response', status: s });

describe('isFailoverOutcome', () => {
  const cases: [string, AttemptOutcome, boolean][] = [
    ['connection refused', { kind: 'connect-failure', code: 'ECONNREFUSED' }, true],
    ['timeout before headers', { kind: 'timeout' }, true],
    ['429', status(429), true],
    ['500', status(500), true],
    ['502', status(502), true],
    ['503', status(503), true],
    ['504', status(504), true],
    ['501 (not in the default set)', status(501), false],
    ['200', status(200), false],
    ['400', status(400), false],
    ['401', status(401), false],
    ['403', status(403), false],
    ['404', status(404), false],
    ['408 (not in the default set)', status(408), false],
    ['413', status(413), false],
    ['422', status(422), false],
    ['client abort', { kind: 'aborted' }, false],
  ];
  for (const [name, outcome, want] of cases) it(`${name} → ${want ? 'fail over' : 'stop'}`, () => expect(isFailoverOutcome(outcome, policy)).toBe(want));

  it('follows the configured set', () => {
    const narrow: RetryPolicy = { ...policy, onTimeout: false, statuses: new Set([503]) };
    expect(isFailoverOutcome({ kind: 'timeout' }, narrow)).toBe(false);
    expect(isFailoverOutcome(status(500), narrow)).toBe(false);
    expect(isFailoverOutcome(status(503), narrow)).toBe(true);
    expect(isFailoverOutcome({ kind: 'connect-failure' }, { ...narrow, onConnectFailure: false })).toBe(false);
  });
});

describe('decide', () => {
  const cases: [string, AttemptOutcome, Partial<AttemptState>, ReturnType<typeof decide>][] = [
    ['retryable with room left', status(503), {}, { retry: true }],
    ['success', status(200), {}, { retry: false, reason: 'done' }],
    ['4xx passes through', status(400), {}, { retry: false, reason: 'done' }],
    ['connect failure fails over', { kind: 'connect-failure' }, {}, { retry: true }],
    ['response already started', status(503), { responseStarted: true }, { retry: false, reason: 'response-started' }],
    ['client gone', status(503), { clientGone: true }, { retry: false, reason: 'client-gone' }],
    ['aborted outcome', { kind: 'aborted' }, {}, { retry: false, reason: 'client-gone' }],
    ['attempts reached', status(503), { attemptsMade: 3 }, { retry: false, reason: 'attempts' }],
    ['no backend left', status(503), { backendsLeft: 0 }, { retry: false, reason: 'backends' }],
    ['budget used up', { kind: 'timeout' }, { elapsedMs: 10_000 }, { retry: false, reason: 'budget' }],
  ];
  for (const [name, outcome, state, want] of cases) it(name, () => expect(decide(outcome, { ...fresh, ...state }, policy)).toEqual(want));

  it('reports a failure the route does not fail over on', () => {
    expect(decide({ kind: 'timeout' }, fresh, { ...policy, onTimeout: false })).toEqual({ retry: false, reason: 'not-retryable' });
  });

  it('client gone wins over everything, even a started response', () => {
    expect(decide(status(503), { ...fresh, clientGone: true, responseStarted: true }, policy)).toEqual({ retry: false, reason: 'client-gone' });
  });
});

describe('budgets and attempt timeouts', () => {
  const timeouts = { ...DEFAULT_TIMEOUTS, connectMs: 2_000, firstByteMs: 6_000, totalMs: 8_000 };

  it('non-streaming requests are also bounded by the total deadline', () => {
    expect(requestBudgetMs(policy, timeouts, false)).toBe(8_000);
    expect(requestBudgetMs(policy, timeouts, true)).toBe(10_000);
  });

  it('clips each attempt to what is left, so attempts × timeout never exceeds the budget', () => {
    expect(attemptTimeouts(timeouts, 10_000, 0)).toEqual({ connectMs: 2_000, headersMs: 6_000 });
    expect(attemptTimeouts(timeouts, 10_000, 6_000)).toEqual({ connectMs: 2_000, headersMs: 4_000 });
    expect(attemptTimeouts(timeouts, 10_000, 9_500)).toEqual({ connectMs: 500, headersMs: 500 });
    expect(attemptTimeouts(timeouts, 10_000, 10_000)).toBeUndefined();
    // A sliver left (a clipped deadline's timer firing by the loop's cached clock) starts nothing.
    expect(attemptTimeouts(timeouts, 10_000, 9_991)).toBeUndefined();
    expect(attemptTimeouts(timeouts, 10_000, 9_999.4)).toBeUndefined();
    expect(attemptTimeouts(timeouts, 10_000, 9_990)).toEqual({ connectMs: 10, headersMs: 10 });
  });

  it('a run of hanging attempts ends at the budget', () => {
    let elapsed = 0;
    let attempts = 0;
    for (;;) {
      const t = attemptTimeouts(timeouts, 10_000, elapsed);
      if (!t) break;
      attempts++;
      elapsed += t.headersMs; // every backend hangs until its timeout
      if (
        !decide(
          { kind: 'timeout' },
          { attemptsMade: attempts, backendsLeft: 5, elapsedMs: elapsed, clientGone: false, responseStarted: false },
          { ...policy, attempts: 10 },
        ).retry
      )
        break;
    }
    expect(elapsed).toBe(10_000);
    expect(attempts).toBe(2);
  });
});

describe('healthVerdict and outcomeLabel', () => {
  const cases: [AttemptOutcome, string, string][] = [
    [status(200), 'success', '2xx'],
    [status(304), 'success', '3xx'],
    [status(302), 'failure', '3xx'],
    [status(308), 'failure', '3xx'],
    [status(404), 'success', '4xx'],
    [status(401), 'success', 'credentials'], // the backend refused the gateway's credential
    [status(429), 'failure', '429'],
    [{ kind: 'response', status: 429, retryAfterMs: 5_000 }, 'rate-limited', '429'],
    [status(503), 'failure', '5xx'],
    [{ kind: 'connect-failure' }, 'failure', 'connect_error'],
    [{ kind: 'connect-failure', code: SHUTDOWN_CODE }, 'none', 'connect_error'], // the gateway's own shutdown
    [{ kind: 'connect-failure', code: CREDENTIALS_CODE }, 'failure', 'credentials'], // nothing sent: no credential
    [{ kind: 'timeout' }, 'failure', 'timeout'],
    [{ kind: 'aborted' }, 'none', 'aborted'],
  ];
  for (const [outcome, verdict, label] of cases)
    it(`${JSON.stringify(outcome)} → ${verdict}, ${label}`, () => {
      expect(healthVerdict(outcome)).toBe(verdict);
      expect(outcomeLabel(outcome)).toBe(label);
    });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  const h = (headers: Record<string, string>) => (name: string) => headers[name];
  const cases: [Record<string, string>, number | undefined][] = [
    [{}, undefined],
    [{ 'retry-after': '7' }, 7_000],
    [{ 'retry-after': '1.5' }, 1_500],
    [{ 'retry-after': '0' }, undefined],
    [{ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }, 30_000],
    [{ 'retry-after': 'Wed, 31 Dec 2025 23:59:00 GMT' }, undefined],
    [{ 'retry-after': 'soon' }, undefined],
    [{ 'retry-after-ms': '250', 'retry-after': '9' }, 250],
    [{ 'retry-after-ms': 'x', 'retry-after': '9' }, 9_000],
  ];
  for (const [headers, want] of cases) it(JSON.stringify(headers), () => expect(parseRetryAfter(h(headers), now)).toBe(want));
});

describe('finalError', () => {
  it('maps the last outcome to 502/504 and names no backend', () => {
    expect(finalError({ kind: 'connect-failure', code: 'ECONNREFUSED' }, 'm', 2)).toMatchObject({ status: 502, code: 'upstream_unreachable' });
    expect(finalError({ kind: 'timeout' }, 'm', 1)).toMatchObject({ status: 504, code: 'upstream_timeout' });
    expect(finalError({ kind: 'connect-failure', code: 'UND_ERR_CONNECT_TIMEOUT' }, 'm', 1)).toMatchObject({ status: 504, code: 'upstream_timeout' });
    expect(finalError(undefined, 'm', 0)).toMatchObject({ status: 504, code: 'upstream_timeout' });
    expect(finalError({ kind: 'connect-failure', code: 'other' }, 'm', 1)).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(finalError({ kind: 'connect-failure' }, 'm', 2).message).toBe('No upstream of model "m" could be reached (2 attempts).');
  });

  it('an attempt ended by the gateway shutting down → 503 server_shutting_down (the SDKs retry it)', () => {
    expect(finalError({ kind: 'connect-failure', code: SHUTDOWN_CODE }, 'm', 1)).toMatchObject({ status: 503, code: 'server_shutting_down' });
  });
});
