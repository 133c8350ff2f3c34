// The cost of a request's usage at the prices of the backend that answered (model/cost.ts), put on the usage
// record itself, so that the usage record, the metrics, the span and money limits all read one figure. Pure.
import { costOf } from '../../model/cost.js';
import type { Family } from '../../model/families.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import type { Usage, UsageCost } from '../../model/usage.js';

/** The usage with its cost. A request that consumed nothing (an error answer) costs 0, priced or not. */
export function priced(usage: Usage, backend: CompiledBackend | undefined, family: Family, currency: string): Usage {
  if (consumedNothing(usage)) return { ...usage, cost: { micros: 0, known: true, currency } };
  const cost = costOf(usage, backend?.pricing, family);
  // A credit gives back what its seconds cost: the same figure, negative.
  const micros = usage.credit && cost.micros > 0 ? -cost.micros : cost.micros;
  return { ...usage, cost: { micros, known: cost.known, currency } satisfies UsageCost };
}

function consumedNothing(u: Usage): boolean {
  return (
    u.inputTokens <= 0 &&
    u.outputTokens <= 0 &&
    (u.seconds ?? 0) <= 0 &&
    (u.characters ?? 0) <= 0 &&
    (u.images?.count ?? 0) <= 0 &&
    u.serverToolCalls === undefined
  );
}
