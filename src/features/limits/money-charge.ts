// What a request reserves and settles on money limits, in micro-units (model/cost.ts). Before the call the backend
// is not known: failover may use any planned backend, so the reservation is the highest largest-cost over them.
// After it, the exact cost at the prices of the backend that answered. Pure.
import { namedBackend, type Routed } from '../../dataplane/exchange/exchange.js';
import { costOf, maxCostOf } from '../../model/cost.js';
import type { Family } from '../../model/families.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import type { Usage } from '../../model/usage.js';
import type { ReservedUse } from './estimate.js';

export interface MoneyReservation {
  /** The largest cost over the backends kept, rounded up. */
  readonly micros: number;
  /** The planned backends whose largest cost is known (all of them when unpriced ones are allowed). */
  readonly backends: readonly CompiledBackend[];
  /** Backends kept although their cost is unknown (allowUnpriced): their known part is counted. */
  readonly unpriced: readonly CompiledBackend[];
}

/**
 * The reservation over the planned backends. A backend whose largest cost is unknown is dropped from the plan
 * (a money limit never sends a request where its cost cannot be counted), or kept and counted at what can be priced
 * when `allowUnpriced`.
 */
export function reserveMoney(family: Family, use: ReservedUse, backends: readonly CompiledBackend[], allowUnpriced: boolean): MoneyReservation {
  let micros = 0;
  const kept: CompiledBackend[] = [];
  const unpriced: CompiledBackend[] = [];
  for (const b of backends) {
    const cost = maxCostOf(use, b.pricing, family);
    if (!cost.known) {
      if (!allowUnpriced) continue;
      unpriced.push(b);
    }
    kept.push(b);
    if (cost.micros > micros) micros = cost.micros;
  }
  return { micros, backends: kept.length === backends.length ? backends : kept, unpriced };
}

/**
 * The exact cost of a settled request at the prices of the backend that answered (x.backend), in micro-units: the
 * cost the usage feature put on the settled usage, or computed here where usage is not priced (the usage feature not
 * wired); undefined when the cost is unknown (a price the usage needed is missing) and unpriced use is not allowed:
 * the reservation then stands.
 */
export function settledMicros(x: Routed, usage: Usage, allowUnpriced: boolean): number | undefined {
  const cost = usage.cost ?? costOf(usage, namedBackend(x)?.pricing, x.family);
  return cost.known || allowUnpriced ? cost.micros : undefined;
}
