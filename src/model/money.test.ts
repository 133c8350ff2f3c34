import { describe, expect, it } from 'vitest';
import { currencyDigits, formatMoney, isCurrency, MAX_MONEY_MICROS, parseMoney } from './money.js';

describe('parseMoney', () => {
  it.each([
    ['3.00', 3_000_000],
    ['0.075', 75_000],
    ['2500', 2_500_000_000],
    ['0', 0],
    ['0.000001', 1], // the smallest amount: one micro-unit
    ['0.1', 100_000], // exact, unlike 0.1 as a binary float
    ['000.5', 500_000],
    ['999999999.999999', 999_999_999_999_999], // the largest: 1e15 - 1, a safe integer
  ])('%s is %d micro-units', (text, micros) => {
    expect(parseMoney(text)).toBe(micros);
  });

  it('the largest amount is MAX_MONEY_MICROS', () => {
    expect(parseMoney('999999999.999999')).toBe(MAX_MONEY_MICROS);
    expect(Number.isSafeInteger(MAX_MONEY_MICROS)).toBe(true);
  });

  it.each([
    '1e-7', // exponent
    '1E3',
    '0.0000001', // 7 decimal places
    '1.',
    '.5',
    '-1',
    '+1',
    '1,000',
    ' 1',
    '1 ',
    'NaN',
    'Infinity',
    '',
    '1000000000', // 10 integer digits: past a billion units
    '0x10',
    '１', // a full-width digit
  ])('refuses %j', (text) => {
    expect(parseMoney(text)).toBeUndefined();
  });
});

describe('formatMoney', () => {
  it.each([
    [3_000_000, 2, '3.00'],
    [75_000, 2, '0.075'], // a price keeps its third decimal
    [1, 2, '0.000001'],
    [0, 2, '0.00'],
    [2_500_000_000, 2, '2500.00'],
    [2_500_000_000, 0, '2500'], // JPY
    [500_000, 0, '0.5'], // decimals beyond the minor unit are kept, never rounded away
    [1_234_567, 3, '1.234567'],
    [1_200_000, 3, '1.200'], // BHD
    [MAX_MONEY_MICROS, 2, '999999999.999999'],
    [Number.MAX_SAFE_INTEGER, 2, '9007199254.740991'], // no exponent even past the pattern's bound
  ])('%d µ with %d digits is %s', (micros, digits, text) => {
    expect(formatMoney(micros, digits)).toBe(text);
  });

  it('round-trips every amount parseMoney reads', () => {
    for (const text of ['3.00', '0.075', '2500.00', '0.000001', '999999999.999999']) expect(formatMoney(parseMoney(text)!, 2)).toBe(text);
  });

  it('refuses what is not a non-negative safe integer', () => {
    for (const bad of [-1, 0.5, Number.NaN, 2 ** 53]) expect(() => formatMoney(bad)).toThrow(RangeError);
  });
});

describe('currencies', () => {
  it('knows ISO 4217 codes and their minor units from ICU', () => {
    expect(['USD', 'EUR', 'JPY', 'CHF'].every(isCurrency)).toBe(true);
    expect(['usd', 'ABC', 'US', 'USDT', ''].some(isCurrency)).toBe(false);
    expect([currencyDigits('USD'), currencyDigits('JPY'), currencyDigits('BHD')]).toEqual([2, 0, 3]);
  });
});
