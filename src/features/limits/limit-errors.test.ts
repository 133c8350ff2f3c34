import { describe, expect, it } from 'vitest';
import type { MoneyLimitRule } from '../../model/money-limits.js';
import { refusalError } from './limit-errors.js';

const rule: MoneyLimitRule = { scope: 'group/ai/team', field: 'costPerMonth', window: 'month', limit: 10_000_000, warnAt: undefined };

describe('the 429 of a money limit', () => {
  it.each([
    ['JPY', '(10 JPY)', 'up to 0.5 JPY'],
    ['KWD', '(10.000 KWD)', 'up to 0.500 KWD'],
    ['USD', '(10.00 USD)', 'up to 0.50 USD'],
  ])('writes %s amounts with the currency’s own decimals', (currency, limit, cost) => {
    const err = refusalError({ rule, cost: 500_000, used: 9_800_000, resetMs: 1000 }, [], currency);
    expect(err.message).toContain(limit);
    expect(err.message).toContain(cost);
  });
});
