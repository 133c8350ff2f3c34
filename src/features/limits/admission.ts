// What the limiter hands out: an admission (what a request let through holds, to settle and release once) or a
// refusal (which rule, and where it stood), and what a replica holds of one counter. Plain data, no I/O.
import type { MoneyLimitRule } from '../../model/money-limits.js';
import type { LimitRule } from '../../model/usage-limits.js';
import type { CounterKind } from './counter-store.js';

/** What this replica holds of one counter. */
export interface Local {
  readonly kind: CounterKind;
  /** The limit the lease was taken under: a changed limit drops it (given back at the next sync). */
  readonly limit: number;
  readonly windowEnd: number;
  readonly ttlMs: number;
  /** Units granted to this replica and not yet spent; negative when settlement spent more than was held (a debt). */
  left: number;
  /** The store's count as of this replica's last grant, for the remaining-* headers. */
  seen: number;
  /** Requests in flight on an in-flight counter (their slots are spent, not left). */
  inUse: number;
  touched: boolean;
}

/** A rule of either kind: request and token rules, or money rules (counted in micro-units). */
export type AnyRule = LimitRule | MoneyLimitRule;

export interface Held {
  readonly key: string;
  readonly rule: AnyRule;
  /** Settles to the exact tokens (token rules), the exact cost (money rules), or never (requests, slots). */
  readonly settles: 'tokens' | 'money' | undefined;
  readonly cost: number;
  readonly local: Local;
}

/** The money a request reserves on its money rules: its largest cost, in micro-units. */
export interface MoneyCharge {
  readonly rules: readonly MoneyLimitRule[];
  readonly micros: number;
  /** The requesting token's group, a label of model_gateway_budget_warnings_total. */
  readonly group?: string;
}

/** A request let through: what it holds, to settle and release. */
export class Admission {
  readonly held: readonly Held[];
  /** False when the store failed and the request was let through uncounted (fail open). */
  readonly counted: boolean;
  /** Its money rules and reservation: its spend counts on them at settlement, counted or not (spend is what was spent). */
  readonly money: MoneyCharge | undefined;
  #settled = false;
  #released = false;
  constructor(held: readonly Held[], counted: boolean, money?: MoneyCharge) {
    this.held = held;
    this.counted = counted;
    this.money = money;
  }
  /** Once: first call wins (settle and release each happen at most once per admission). */
  claimSettle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    return true;
  }
  claimRelease(): boolean {
    if (this.#released) return false;
    this.#released = true;
    return true;
  }
}

export interface Refusal {
  readonly rule: AnyRule;
  /** The request's cost on that rule. */
  readonly cost: number;
  /** The counter's value when it refused (for remaining-*), or undefined when the request can never fit. */
  readonly used: number | undefined;
  /** Ms until the refusing window resets (1000 for in-flight counts). */
  readonly resetMs: number;
}

/** Where a rule stands for the x-ratelimit-* headers. */
export interface RuleState {
  readonly rule: LimitRule;
  readonly remaining: number;
  readonly resetMs: number;
}
