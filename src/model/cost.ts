// The cost of a usage record at a backend's prices, and the most a reservation can cost: pure integer arithmetic
// in micro-units (money.ts). Every line is exact (quantity × price / per); the lines are summed exactly and the sum
// is rounded once per request, half up to the micro-unit, so a client that knows the usage and the prices gets the
// same figure (docs/usage-and-limits.md, "Costs and budgets"). Rounding each line instead would lose up to half a
// micro-unit per line, and most lines of a small request are fractions of one.
import type { Family } from './families.js';
import { type ImagePrice, PRICE_FAMILIES, type Pricing } from './pricing.js';
import type { ImageCount, ServerToolCalls, Usage } from './usage.js';

/**
 * A price the usage needed and the backend does not set; 'pricing' when the backend sets no price at all;
 * 'serverToolCalls' when the calls of server-side tools could not be counted.
 */
type MissingPrice = keyof Pricing | 'pricing' | 'serverToolCalls';

interface CostLine {
  /** The price applied (cached input falls back to inputPerMTok). */
  readonly price: keyof Pricing;
  /** Tokens, characters, milliseconds of audio or video, images, or calls of server-side tools. */
  readonly quantity: number;
  /** Micro-units per `per` of the quantity. */
  readonly unitPrice: number;
  /** 1,000,000 (per million tokens or characters), 1,000 (milliseconds, priced per second) or 1 (per image). */
  readonly per: number;
}

export interface Cost {
  /**
   * Micro-units: the exact sum of the lines, rounded half up once (maxCostOf: rounded up). When `known` is false,
   * only what could be priced, a lower bound: never show it as the cost.
   */
  readonly micros: number;
  /** False when the backend has no pricing or lacks a price the usage needed (see `missing`). */
  readonly known: boolean;
  /** The usage was the gateway's estimate. */
  readonly estimated: boolean;
  readonly lines: readonly CostLine[];
  readonly missing: readonly MissingPrice[];
}

/** What a reservation may consume: upper bounds, as the limits feature reserves them before the call. */
export interface CostReservation {
  /** An upper bound of the input tokens. */
  readonly inputTokens: number;
  /** The most output tokens the request may produce. */
  readonly outputTokens: number;
  readonly seconds?: number;
  readonly characters?: number;
  readonly images?: ImageCount;
}

const INPUT_SIDE = ['cachedInputPerMTok', 'cacheWritePerMTok', 'cacheWrite1hPerMTok'] as const;
const MEDIA_INPUT = ['imageInputPerMTok', 'audioInputPerMTok'] as const;
const MEDIA_OUTPUT = ['imageOutputPerMTok', 'audioOutputPerMTok'] as const;
type TokenPrice = 'inputPerMTok' | 'outputPerMTok' | (typeof INPUT_SIDE)[number] | (typeof MEDIA_INPUT)[number] | (typeof MEDIA_OUTPUT)[number];
const AUDIO_INPUT = new Set<Family>(['audio.transcriptions', 'audio.translations']);
const M = 1_000_000;

/** The cost of what a request consumed at its backend's prices. */
export function costOf(usage: Usage, pricing: Pricing | undefined, family: Family): Cost {
  if (!pricing) return unpriced(usage.estimated);
  const sum = new Sum();
  // A request its backend prices by the unit is billed by the unit alone: the tokens a model billed that way also
  // reports (gpt-image-1, gpt-4o-transcribe) are the same bill in other terms, and pricing both would charge it twice.
  if (!pricedByUnit(pricing, family, usage)) addTokens(sum, pricing, usage);
  const byTokens = usage.inputTokens > 0 || usage.outputTokens > 0;
  addMeasured(sum, pricing, family, usage, byTokens);
  if (usage.serverToolCalls) addServerTools(sum, pricing, usage.serverToolCalls);
  return sum.cost(usage.estimated, 'half-up');
}

function addTokens(sum: Sum, pricing: Pricing, usage: Usage): void {
  const cached = count(usage.cachedInputTokens);
  const writes = count(usage.cacheWriteInputTokens ?? 0);
  const writes1h = Math.min(count(usage.cacheWrite1hInputTokens ?? 0), writes);
  // Clamped: an upstream that reports more cached than input tokens is not charged a negative amount. Image and
  // audio tokens come out of the uncached part, never priced twice (a cache read is priced as one whatever its kind).
  let uncached = Math.max(0, count(usage.inputTokens) - cached - writes);
  const imageIn = Math.min(count(usage.imageInputTokens ?? 0), uncached);
  uncached -= imageIn;
  const audioIn = Math.min(count(usage.audioInputTokens ?? 0), uncached);
  sum.add('inputPerMTok', uncached - audioIn, pricing.inputPerMTok, M);
  // Image and audio tokens cost several times a text token: no stand-in, a missing price is unknown.
  sum.add('imageInputPerMTok', imageIn, pricing.imageInputPerMTok, M);
  sum.add('audioInputPerMTok', audioIn, pricing.audioInputPerMTok, M);
  // A cache read never costs more than an uncached token, so the input price is a safe stand-in for a missing one.
  if (pricing.cachedInputPerMTok !== undefined) sum.add('cachedInputPerMTok', cached, pricing.cachedInputPerMTok, M);
  else sum.add('inputPerMTok', cached, pricing.inputPerMTok, M);
  // Cache writes cost more than input (1.25× and 2× at Anthropic): no stand-in, a missing price is unknown.
  sum.add('cacheWritePerMTok', writes - writes1h, pricing.cacheWritePerMTok, M);
  sum.add('cacheWrite1hPerMTok', writes1h, pricing.cacheWrite1hPerMTok, M);
  const output = count(usage.outputTokens);
  const imageOut = Math.min(count(usage.imageOutputTokens ?? 0), output);
  const audioOut = Math.min(count(usage.audioOutputTokens ?? 0), output - imageOut);
  sum.add('outputPerMTok', output - imageOut - audioOut, pricing.outputPerMTok, M);
  sum.add('imageOutputPerMTok', imageOut, pricing.imageOutputPerMTok, M);
  sum.add('audioOutputPerMTok', audioOut, pricing.audioOutputPerMTok, M);
}

/** Whether the backend sets the per-unit price of what this request measured (images, audio or video seconds, characters). */
function pricedByUnit(pricing: Pricing, family: Family, u: Usage): boolean {
  if (count(u.images?.count ?? 0) > 0 && pricing.imagePer !== undefined) return true;
  if (count((u.seconds ?? 0) * 1000) > 0) {
    if (AUDIO_INPUT.has(family)) return pricing.audioInputPerSecond !== undefined;
    if (family === 'videos') return pricing.videoPerSecond !== undefined;
  }
  return count(u.characters ?? 0) > 0 && pricing.speechPerMChars !== undefined;
}

/**
 * The most a reservation can cost: each input token at the highest input-side price set (a cache write, an image or
 * audio token can cost more than an uncached text token), each output token at the highest output price, rounded up. Unknown when a needed price
 * is missing.
 */
export function maxCostOf(reservation: CostReservation, pricing: Pricing | undefined, family: Family): Cost {
  if (!pricing) return unpriced(false);
  const sum = new Sum();
  const input = count(reservation.inputTokens);
  // Uncached input can always happen, so the input price is needed; a pricier input-side price replaces it.
  // Image and audio tokens of the families that report them are pricier input or output the same way.
  const inputPrice = highest(pricing, 'inputPerMTok', [...INPUT_SIDE, ...media(family, MEDIA_INPUT)]);
  sum.add(inputPrice, input, pricing[inputPrice], M);
  const output = highest(pricing, 'outputPerMTok', media(family, MEDIA_OUTPUT));
  sum.add(output, count(reservation.outputTokens), pricing[output], M);
  addMeasured(sum, pricing, family, reservation, input > 0 || reservation.outputTokens > 0);
  return sum.cost(false, 'up');
}

/** The base price, or a pricier one of `others` where the base is set. */
function highest(pricing: Pricing, base: TokenPrice, others: readonly TokenPrice[]): TokenPrice {
  let price = base;
  for (const name of others) if (pricing[base] !== undefined && (pricing[name] ?? -1) > pricing[price]!) price = name;
  return price;
}

function media(family: Family, prices: readonly TokenPrice[]): TokenPrice[] {
  return prices.filter((p) => PRICE_FAMILIES[p].includes(family));
}

/**
 * Images, audio and video seconds and speech characters. A model billed by tokens (gpt-image-1, gpt-4o-transcribe)
 * reports tokens: when its backend sets no per-unit price, those tokens are its price and the unit is not a line
 * (when it sets one, the unit is the price and the tokens are not lines, see costOf). With neither tokens nor a
 * price the cost is unknown. An imagePer list that matches no entry is unknown too.
 */
function addMeasured(sum: Sum, pricing: Pricing, family: Family, m: { seconds?: number; characters?: number; images?: ImageCount }, byTokens: boolean): void {
  const per = (name: Exclude<keyof Pricing, 'imagePer'>, quantity: number, price: number | undefined, unit: number) => {
    if (price !== undefined || !byTokens) sum.add(name, quantity, price, unit);
  };
  const images = count(m.images?.count ?? 0);
  if (images > 0) {
    if (pricing.imagePer) sum.add('imagePer', images, imagePrice(pricing.imagePer, m.images!)?.price, 1);
    else if (!byTokens) sum.add('imagePer', images, undefined, 1);
  }
  const ms = count((m.seconds ?? 0) * 1000);
  if (AUDIO_INPUT.has(family)) per('audioInputPerSecond', ms, pricing.audioInputPerSecond, 1000);
  else if (family === 'videos') per('videoPerSecond', ms, pricing.videoPerSecond, 1000);
  per('speechPerMChars', count(m.characters ?? 0), pricing.speechPerMChars, M);
}

/**
 * Calls of tools the upstream ran itself, billed per call on top of the tokens (web fetches are not: Anthropic bills
 * them by their tokens alone): a call without its price, or calls that could not be counted, make the cost unknown
 * rather than low.
 */
function addServerTools(sum: Sum, pricing: Pricing, calls: ServerToolCalls): void {
  sum.add('webSearchPerCall', count(calls.webSearch ?? 0), pricing.webSearchPerCall, 1);
  sum.add('fileSearchPerCall', count(calls.fileSearch ?? 0), pricing.fileSearchPerCall, 1);
  if (calls.uncounted) sum.unknown('serverToolCalls');
}

/** The first entry whose size and quality (where it names them) are the request's. */
function imagePrice(prices: readonly ImagePrice[], image: ImageCount): ImagePrice | undefined {
  return prices.find((p) => (p.size === undefined || p.size === image.size) && (p.quality === undefined || p.quality === image.quality));
}

/** A quantity as a non-negative integer (tokens are integers; milliseconds are rounded half up). */
function count(n: number): number {
  return Number.isFinite(n) && n > 0 ? Math.round(n) : 0;
}

function unpriced(estimated: boolean): Cost {
  return { micros: 0, known: false, estimated, lines: [], missing: ['pricing'] };
}

/**
 * The exact sum of the lines in millionths of a micro-unit (every `per` divides a million), as a bigint: a
 * quantity times a price can pass 2^53.
 */
class Sum {
  readonly lines: CostLine[] = [];
  readonly missing: MissingPrice[] = [];
  #total = 0n;

  add(price: keyof Pricing, quantity: number, unitPrice: number | undefined, per: number): void {
    if (quantity === 0) return;
    if (unitPrice === undefined) return this.unknown(price);
    this.lines.push({ price, quantity, unitPrice, per });
    this.#total += BigInt(quantity) * BigInt(unitPrice) * BigInt(M / per);
  }

  /** Something the cost needs is not known, whatever the prices. */
  unknown(what: MissingPrice): void {
    if (!this.missing.includes(what)) this.missing.push(what);
  }

  cost(estimated: boolean, rounding: 'half-up' | 'up'): Cost {
    const micros = (this.#total + (rounding === 'up' ? BigInt(M - 1) : BigInt(M / 2))) / BigInt(M);
    // Past 2^53 µ (nine billion units) the amount is beyond every budget (at most 1e15 µ): clamp, stay a safe integer.
    const safe = micros > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(micros);
    return { micros: safe, known: this.missing.length === 0, estimated, lines: this.lines, missing: this.missing };
  }
}
