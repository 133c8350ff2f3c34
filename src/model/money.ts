// Money as integer micro-units (a millionth of the gateway's currency), parsed from and formatted to the decimal
// strings that prices and money limits are written in. Integers, so no binary floating point ever touches an amount,
// and no decimal library is needed: parsing is digit arithmetic and costs are exact integer sums (see cost.ts).
//
// A JavaScript number, not a bigint: every amount here is at most MAX_MONEY_MICROS (1e15 µ, a billion units), far
// below 2^53, and the limits' counters (Redis Lua numbers are doubles too) hold the same safe integers as the token
// counters. Products that could pass 2^53 (tokens × price) are computed as bigints in cost.ts and clamped there.

/** Micro-units in one unit of the currency. */
const MICROS_PER_UNIT = 1_000_000;

/** Largest amount a price or a money limit may state: 999,999,999.999999 units, the most the pattern admits. */
export const MAX_MONEY_MICROS = 1e15 - 1;

/**
 * A decimal amount as written in a spec: up to 9 integer digits, optionally a point and 1 to 6 decimals. No sign,
 * no exponent, no bare "1." or ".5": one spelling per amount, and the same regular expression in zod, the CRD
 * (RE2 on the API server) and parseMoney.
 */
export const MONEY_PATTERN = '^[0-9]{1,9}(\\.[0-9]{1,6})?$';
const MONEY = new RegExp(MONEY_PATTERN);

/** Micro-units of a decimal string such as "3.00", "0.075" or "2500"; undefined when it does not match MONEY_PATTERN. */
export function parseMoney(text: string): number | undefined {
  if (!MONEY.test(text)) return undefined;
  const [whole, fraction = ''] = text.split('.') as [string, string?];
  // Both parts are at most 9 and 6 digits: each product and the sum are exact integers below 1e15.
  return Number(whole) * MICROS_PER_UNIT + Number(fraction.padEnd(6, '0'));
}

/**
 * The decimal string of an amount: at least `minDigits` decimals (the currency's minor unit, see currencyDigits),
 * more only where the amount has them (a price of 0.075 stays "0.075", never rounded to "0.08"); never an exponent.
 */
export function formatMoney(micros: number, minDigits = 2): string {
  if (!Number.isSafeInteger(micros) || micros < 0) throw new RangeError(`not an amount in micro-units: ${micros}`);
  const whole = Math.floor(micros / MICROS_PER_UNIT);
  const fraction = String(micros % MICROS_PER_UNIT)
    .padStart(6, '0')
    .replace(/0+$/, '')
    .padEnd(Math.min(Math.max(minDigits, 0), 6), '0');
  return fraction === '' ? String(whole) : `${whole}.${fraction}`;
}

/** Whether `code` is an ISO 4217 currency code the runtime's ICU knows (USD, EUR, JPY, …). */
export function isCurrency(code: string): boolean {
  return /^[A-Z]{3}$/.test(code) && Intl.supportedValuesOf('currency').includes(code);
}

/** Decimals of the currency's minor unit (USD 2, JPY 0, BHD 3), from ICU rather than a table of our own. */
export function currencyDigits(code: string): number {
  return new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().minimumFractionDigits ?? 2;
}
