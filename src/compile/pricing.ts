// Prices and money limits from their decimal strings to micro-units (model/money.ts). Pure. The schemas in
// resources.ts check every amount against the same MONEY_PATTERN first, so parsing cannot fail here.
import { MONEY_FIELDS, type MoneyField, type MoneyLimitRule } from '../model/money-limits.js';
import { parseMoney } from '../model/money.js';
import type { Family } from '../model/families.js';
import { type ImagePrice, PRICE_FAMILIES, type Pricing } from '../model/pricing.js';
import type { ModelRoute } from './resources.js';

type PricingSpec = NonNullable<ModelRoute['spec']['backends'][number]['pricing']>;

function micros(text: string): number {
  const m = parseMoney(text);
  if (m === undefined) throw new Error(`unreachable: "${text}" passed the schema's money pattern but not parseMoney`);
  return m;
}

const optional = (text: string | undefined) => (text === undefined ? undefined : micros(text));

/** A backend's prices in micro-units; fields left out stay undefined (an unknown cost, never 0). */
export function compilePricing(spec: PricingSpec | undefined): Pricing | undefined {
  if (!spec) return undefined;
  const { imagePer, ...perUnit } = spec;
  const out: Record<string, number | readonly ImagePrice[]> = {};
  for (const [field, text] of Object.entries(perUnit)) if (text !== undefined) out[field] = micros(text);
  if (imagePer)
    out.imagePer = imagePer.map((p) => ({
      ...(p.size !== undefined ? { size: p.size } : {}),
      ...(p.quality !== undefined ? { quality: p.quality } : {}),
      price: micros(p.price),
    }));
  return out as Pricing;
}

/**
 * A warning per price of a backend that can never apply, because its route serves none of the families it prices
 * (imagePer on a chat route): the route still serves, but the operator would think it bills. Not refused: the route
 * may serve that family later.
 */
export function idlePrices(backend: string, spec: PricingSpec | undefined, served: ReadonlySet<Family>): string[] {
  if (!spec) return [];
  const out: string[] = [];
  for (const field of Object.keys(spec) as (keyof Pricing)[]) {
    const families = PRICE_FAMILIES[field];
    if (spec[field] === undefined || families === undefined || families.some((f) => served.has(f))) continue;
    const serves = families.length === 1 ? `does not serve ${families[0]}` : `serves none of ${families.join(', ')}`;
    out.push(`backend "${backend}": pricing.${field} can never apply, since the route ${serves}`);
  }
  return out;
}

/** The money rules of one limits block, costPerDay then costPerMonth; none when neither is set. */
export function moneyRules(scope: string, block: { costPerDay?: string; costPerMonth?: string; warnAt?: number } | undefined): MoneyLimitRule[] {
  const out: MoneyLimitRule[] = [];
  if (!block) return out;
  for (const field of Object.keys(MONEY_FIELDS) as MoneyField[]) {
    const limit = optional(block[field]);
    if (limit !== undefined) out.push({ scope, field, window: MONEY_FIELDS[field], limit, warnAt: block.warnAt });
  }
  return out;
}

/** A warning for a limits block whose warnAt applies to nothing (it sets neither costPerDay nor costPerMonth). */
export function idleWarnAt(where: string, block: { costPerDay?: string; costPerMonth?: string; warnAt?: number } | undefined): string[] {
  if (block?.warnAt === undefined || block.costPerDay !== undefined || block.costPerMonth !== undefined) return [];
  return [`${where}warnAt applies to costPerDay and costPerMonth, and this block sets neither`];
}
