// Spend of each Group and GatewayToken that has a money limit, in the current UTC day and calendar month, for
// status.usage: counted from each settled request's cost (the usage feature puts it on the usage record), in
// micro-units, in the limits store beside the limit counters (shared by every replica with Redis), under keys of
// their own. Counted, never checked here: money limits are enforced by reserving and settling, as tokens are.
import type { Routed } from '../../dataplane/exchange/exchange.js';
import type { MoneyLimitRule } from '../../model/money-limits.js';
import type { Limits } from './limits.js';
import { windowAt } from './windows.js';

const SPEND_WINDOWS = ['day', 'month'] as const;
type SpendWindow = (typeof SPEND_WINDOWS)[number];

/** Past its window's end a spend counter is kept this long, as the limit counters are. */
const TTL_MARGIN_MS = 60_000;

/** The key of a scope's spend counter in the window holding `now`. */
export function spendKey(scope: string, window: SpendWindow, now: number): string {
  return `mg:${scope}:spend:${window}:${windowAt(window, now).start}`;
}

/** The scopes whose spend status shows: the token's and its group's money limits, not the per-model ones. */
function spendScopes(rules: readonly MoneyLimitRule[]): string[] {
  return [...new Set(rules.map((r) => r.scope))];
}

/** Counts the request's cost, once it settles, on the spend of its token and group where they have money limits. */
export function countSpend(limits: Limits, x: Routed, now: () => number = Date.now): void {
  const scopes = spendScopes(x.token.moneyLimits);
  if (scopes.length === 0) return;
  x.onSettled((u) => {
    // Known costs only, as model_gateway_cost_total counts them: an unknown cost's figure is a lower bound.
    const micros = u?.cost?.known ? u.cost.micros : 0;
    if (micros <= 0) return;
    const t = now();
    for (const scope of scopes) {
      for (const w of SPEND_WINDOWS) limits.limiter.count(spendKey(scope, w, t), micros, windowAt(w, t).end - t + TTL_MARGIN_MS);
    }
  });
}
