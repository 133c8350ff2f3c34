import { describe, expect, it } from 'vitest';
import { grant, leaseExtra } from './lease.js';
import { resetText, windowAt } from './windows.js';

describe('grant', () => {
  it('grants the need and the extra while plenty is free', () => {
    expect(grant(0, 1, 50, 1000)).toBe(51);
  });
  it('grants at most half of what is left after the need, so leases shrink near the limit', () => {
    expect(grant(990, 1, 50, 1000)).toBe(1 + 4);
    expect(grant(998, 1, 50, 1000)).toBe(1 + 0);
  });
  it('grants the exact last unit and then nothing', () => {
    expect(grant(999, 1, 50, 1000)).toBe(1);
    expect(grant(1000, 1, 50, 1000)).toBe(0);
  });
  it('grants all of a need or nothing', () => {
    expect(grant(900, 150, 0, 1000)).toBe(0);
    expect(grant(900, 100, 0, 1000)).toBe(100);
  });
  it('never lets the total of grants pass the limit, whatever the order of asks', () => {
    let used = 0;
    let admitted = 0;
    for (let i = 0; i < 500; i++) {
      const g = grant(used, 1 + (i % 7), leaseExtra(317, true), 317);
      used += g;
      if (g > 0) admitted++;
      expect(used).toBeLessThanOrEqual(317);
    }
    expect(admitted).toBeGreaterThan(0);
  });
  it('a limit of 0 admits nothing', () => {
    expect(grant(0, 1, 0, 0)).toBe(0);
  });
});

describe('leaseExtra', () => {
  it('is a twentieth of the limit with leases, and 0 for small limits or without leases', () => {
    expect(leaseExtra(1000, true)).toBe(50);
    expect(leaseExtra(10, true)).toBe(0);
    expect(leaseExtra(1000, false)).toBe(0);
  });
});

describe('windowAt', () => {
  const t = Date.UTC(2026, 10, 24, 19, 33, 12, 345);
  it('minute, day and calendar month windows in UTC', () => {
    expect(windowAt('minute', t)).toEqual({ start: Date.UTC(2026, 10, 24, 19, 33), end: Date.UTC(2026, 10, 24, 19, 34) });
    expect(windowAt('day', t)).toEqual({ start: Date.UTC(2026, 10, 24), end: Date.UTC(2026, 10, 25) });
    expect(windowAt('month', t)).toEqual({ start: Date.UTC(2026, 10, 1), end: Date.UTC(2026, 11, 1) });
  });
  it('a December month ends at the next new year', () => {
    expect(windowAt('month', Date.UTC(2026, 11, 31, 23)).end).toBe(Date.UTC(2027, 0, 1));
  });
});

describe('resetText', () => {
  it("formats like OpenAI's reset headers", () => {
    expect(resetText(0)).toBe('0s');
    expect(resetText(400)).toBe('1s');
    expect(resetText(360_000)).toBe('6m0s');
    expect(resetText(3_723_000)).toBe('1h2m3s');
    expect(resetText(2 * 86_400_000 + 4 * 3_600_000)).toBe('2d4h0m0s');
  });
});
