import { describe, expect, it } from 'vitest';
import type { MoneyLimitRule } from '../../model/money-limits.js';
import { pastWarnAt, warningText } from './budget-warnings.js';

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
});
