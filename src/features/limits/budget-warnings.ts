// The soft threshold of money limits (warnAt, a percentage): the response header a request gets once a limit it
// spends on is past its threshold, and the crossing itself, noticed once per counter window by the replica whose
// settlement took it across. Pure apart from the set of crossings it remembers.
import type { MoneyLimitRule } from '../../model/money-limits.js';
import { windowAt } from './windows.js';

export const WARNING_HEADER = 'x-model-gateway-budget-warning';

/** Past the threshold: spent ≥ warnAt % of the limit (integers only). */
export function pastWarnAt(rule: MoneyLimitRule, spent: number): boolean {
  return rule.warnAt !== undefined && spent * 100 >= rule.warnAt * rule.limit;
}

/** One warning as the header tells it: "group ns/team-a costPerMonth 82%" (no secret, only kind and name). */
export function warningText(rule: MoneyLimitRule, spent: number): string {
  const [kind, ns, name, , model] = rule.scope.split('/');
  const who = model === undefined ? `${kind} ${ns}/${name}` : `group ${ns}/${name} model ${model}`;
  const percent = rule.limit === 0 ? 100 : Math.floor((spent * 100) / rule.limit);
  return `${who} ${rule.field} ${percent}%`;
}

/** Remembers which counters crossed their threshold in their current window, so each crossing is told once. */
export class Crossings {
  /** Counter key (it carries its window's start) → the window's end. */
  readonly #seen = new Map<string, number>();

  /** True the first time `key`'s spend is seen past the rule's threshold in its window. */
  cross(key: string, rule: MoneyLimitRule, spent: number, now: number): boolean {
    if (!pastWarnAt(rule, spent) || this.#seen.has(key)) return false;
    for (const [k, end] of this.#seen) if (end <= now) this.#seen.delete(k);
    this.#seen.set(key, windowAt(rule.window, now).end);
    return true;
  }
}
