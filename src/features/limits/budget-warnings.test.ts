import { describe, expect, it } from 'vitest';
import type { MoneyLimitRule } from '../../model/money-limits.js';
import { Crossings, pastWarnAt, warningText } from './budget-warnings.js';

const rule = (scope: string, warnAt: number | undefined): MoneyLimitRule => ({ scope, field: 'costPerMonth', window: 'month', limit: 2_500_000_000, warnAt });

describe('budget warnings', () => {
  it('is past warnAt at exactly the percentage, in integers', () => {
    expect(pastWarnAt(rule('group/ns/team-a', 80), 1_999_999_999)).toBe(false);
    expect(pastWarnAt(rule('group/ns/team-a', 80), 2_000_000_000)).toBe(true);
    expect(pastWarnAt(rule('group/ns/team-a', undefined), 2_500_000_000)).toBe(false);
  });

  it('names the limit by kind and name, with the whole percentage spent', () => {
    expect(warningText(rule('group/ns/team-a', 80), 2_050_000_000)).toBe('group ns/team-a costPerMonth 82%');
    expect(warningText(rule('token/ns/alice', 80), 2_500_000_000)).toBe('token ns/alice costPerMonth 100%');
    expect(warningText(rule('group/ns/team-a/model/gpt-4o', 80), 2_000_000_000)).toBe('group ns/team-a model gpt-4o costPerMonth 80%');
  });

  it('tells a crossing once per counter window', () => {
    const c = new Crossings();
    const r = rule('group/ns/team-a', 80);
    const now = Date.UTC(2026, 10, 27);
    expect(c.cross('k:nov', r, 1_000_000_000, now)).toBe(false);
    expect(c.cross('k:nov', r, 2_100_000_000, now)).toBe(true);
    expect(c.cross('k:nov', r, 2_200_000_000, now)).toBe(false);
    expect(c.cross('k:dec', r, 2_200_000_000, Date.UTC(2026, 11, 2))).toBe(true);
  });
});
