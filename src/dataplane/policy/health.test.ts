import { describe, expect, it } from 'vitest';
import { BackendHealth, type HealthChange } from './health.js';

function setup(options: ConstructorParameters<typeof BackendHealth>[0] = {}) {
  const clock = { t: 1_000_000 };
  const changes: HealthChange[] = [];
  const health = new BackendHealth(options, () => clock.t);
  health.onChange((c) => changes.push(c));
  return { clock, health, changes, advance: (ms: number) => (clock.t += ms) };
}

describe('BackendHealth', () => {
  it('ejects after N consecutive failures, and a success in between resets the count', () => {
    const { health } = setup({ consecutiveFailures: 3 });
    health.recordFailure('a');
    health.recordFailure('a');
    health.recordSuccess('a');
    health.recordFailure('a');
    health.recordFailure('a');
    expect(health.state('a')).toBe('healthy');
    health.recordFailure('a');
    expect(health.state('a')).toBe('ejected');
    expect(health.isEjected('a')).toBe(true);
    expect(health.isEjected('b')).toBe(false);
  });

  it('grows the cool-down on repeated ejection, capped', () => {
    const { health, advance } = setup({ consecutiveFailures: 1, baseEjectionMs: 10_000, maxEjectionMs: 35_000 });
    const observed: number[] = [];
    for (let i = 0; i < 4; i++) {
      health.recordFailure('a');
      observed.push(health.ejectedForMs('a'));
      advance(health.ejectedForMs('a'));
    }
    expect(observed).toEqual([10_000, 20_000, 35_000, 35_000]);
  });

  it('puts a backend on probation after its cool-down: one failure re-ejects, one success restores', () => {
    const { health, advance, changes } = setup({ consecutiveFailures: 3, baseEjectionMs: 10_000 });
    for (let i = 0; i < 3; i++) health.recordFailure('a');
    advance(9_999);
    expect(health.state('a')).toBe('ejected');
    advance(1);
    expect(health.state('a')).toBe('probation');
    expect(health.isEjected('a')).toBe(false);
    health.recordFailure('a');
    expect(health.state('a')).toBe('ejected');
    expect(health.ejectedForMs('a')).toBe(20_000);
    advance(20_000);
    health.recordSuccess('a');
    expect(health.state('a')).toBe('healthy');
    expect(changes.map((c) => c.state)).toEqual(['ejected', 'ejected', 'healthy']);
  });

  it('a success restores an ejected backend at once (it was tried as the last resort and worked)', () => {
    const { health } = setup({ consecutiveFailures: 1 });
    health.recordFailure('a');
    expect(health.isEjected('a')).toBe(true);
    health.recordSuccess('a');
    expect(health.state('a')).toBe('healthy');
  });

  it('ignores outcomes of attempts that started before the ejection', () => {
    const { health, clock, advance } = setup({ consecutiveFailures: 1, baseEjectionMs: 1_000 });
    const before = clock.t;
    advance(10);
    health.recordRateLimited('a', 30_000);
    health.recordSuccess('a', before);
    expect(health.isEjected('a')).toBe(true);
    advance(30_000);
    health.recordFailure('a', before);
    expect(health.state('a')).toBe('probation');
  });

  it('failures while ejected do not extend the cool-down', () => {
    const { health, advance } = setup({ consecutiveFailures: 1, baseEjectionMs: 10_000 });
    health.recordFailure('a');
    advance(5_000);
    health.recordFailure('a');
    expect(health.ejectedForMs('a')).toBe(5_000);
  });

  it('a 429 with retry-after ejects for that long (capped) without growing the backoff', () => {
    const { health, advance } = setup({ consecutiveFailures: 1, baseEjectionMs: 10_000, maxRetryAfterMs: 60_000 });
    health.recordRateLimited('a', 7_000);
    expect(health.ejectedForMs('a')).toBe(7_000);
    advance(7_000);
    expect(health.isEjected('a')).toBe(false);
    health.recordRateLimited('a', 3_600_000);
    expect(health.ejectedForMs('a')).toBe(60_000);
    advance(60_000);
    health.recordFailure('a');
    expect(health.ejectedForMs('a')).toBe(10_000);
  });

  it('a shorter retry-after never shortens a running ejection', () => {
    const { health } = setup({ consecutiveFailures: 1, baseEjectionMs: 10_000 });
    health.recordFailure('a');
    health.recordRateLimited('a', 1_000);
    expect(health.ejectedForMs('a')).toBe(10_000);
  });

  it('starts the backoff over after a long quiet period', () => {
    const { health, advance } = setup({ consecutiveFailures: 1, baseEjectionMs: 10_000, maxEjectionMs: 60_000 });
    health.recordFailure('a');
    advance(10_000);
    health.recordSuccess('a');
    advance(60_000);
    health.recordFailure('a');
    expect(health.ejectedForMs('a')).toBe(10_000);
  });

  it('keeps the backoff for a backend that flaps', () => {
    const { health, advance } = setup({ consecutiveFailures: 1, baseEjectionMs: 10_000, maxEjectionMs: 60_000 });
    health.recordFailure('a');
    advance(10_000);
    health.recordSuccess('a');
    advance(1_000);
    health.recordFailure('a');
    expect(health.ejectedForMs('a')).toBe(20_000);
  });

  it('prunes backends that left the config', () => {
    const { health } = setup({ consecutiveFailures: 1 });
    health.recordFailure('a');
    health.recordFailure('b');
    health.prune(
      new Map([
        ['b', 'http://b/v1'],
        ['c', 'http://c/v1'],
      ]),
    );
    expect(health.trackedIds()).toEqual(['b']);
    expect(health.state('a')).toBe('healthy');
  });

  it('starts over for a backend whose URL changed, and keeps the state of one whose URL did not', () => {
    const { health } = setup({ consecutiveFailures: 1 });
    health.prune(
      new Map([
        ['a', 'http://typo/v1'],
        ['b', 'http://b/v1'],
      ]),
    );
    health.recordFailure('a');
    health.recordFailure('b');
    health.prune(
      new Map([
        ['a', 'http://fixed/v1'],
        ['b', 'http://b/v1'],
      ]),
    );
    expect(health.state('a')).toBe('healthy');
    expect(health.state('b')).toBe('ejected');
  });

  it('forgets healthy backends that never were ejected', () => {
    const { health } = setup({ consecutiveFailures: 3 });
    health.recordFailure('a');
    health.recordSuccess('a');
    expect(health.trackedIds()).toEqual([]);
  });
});
