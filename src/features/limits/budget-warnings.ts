// The soft threshold of money limits (warnAt, a percentage) of their spend (spend.ts): the response header a request
// gets once a limit it spends on is past its threshold. Pure.
import type { MoneyLimitRule } from '../../model/money-limits.js';

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
