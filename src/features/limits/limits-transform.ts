// Limits as an exchange transform. `prepare` admits the request against its token's and group's rules (and the
// group's per-model ones), then against the rules of the backends in plan order: a backend at its upstream
// account's limit is dropped from the plan (the request fails over before the upstream would answer 429), and
// when none is left the request is shed with 429. Token reservations settle with the request's final usage
// (`onSettled`); in-flight slots are released when the response is over (`onEnd`), whatever happened.
import type { Routed } from '../../dataplane/exchange/exchange.js';
import type { Feature, RequestPlan, TransformFactory } from '../../dataplane/exchange/transform.js';
import { FAMILIES } from '../../model/families.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import type { LimitRule } from '../../model/usage-limits.js';
import type { Usage } from '../../model/usage.js';
import { MAX_OUTPUT_MEMBERS, reservedTokens } from './estimate.js';
import { refusalError, shedError, storeDownError } from './limit-errors.js';
import { Admission, type Refusal, StoreUnavailable } from './limiter.js';
import type { Limits } from './limits.js';
import { countSpend } from './spend.js';

/** Limits on every family: reads the request's caps on output, to reserve its largest. */
export function limitsFeature(limits: Limits): Feature {
  const factory = limitsTransforms(limits);
  return { reads: MAX_OUTPUT_MEMBERS, families: Object.fromEntries(FAMILIES.map((f) => [f, factory])) };
}

/**
 * The transform factory of every family: none for a request with no limit anywhere on its path. A call that
 * consumes nothing (a follow-up that reads, deletes or cancels) counts as a request and an in-flight slot, and token
 * limits never refuse it.
 */
function limitsTransforms(limits: Limits): TransformFactory {
  return (x, kind) => {
    if (kind.consumes) countSpend(limits, x);
    const own = x.token.limits;
    const perModel = x.token.group.modelLimits.get(x.route.model);
    const all = perModel ? [...own, ...perModel] : own;
    const rules = kind.consumes ? all : all.filter(countsRequests);
    if (rules.length === 0 && !x.route.backends.some(hasLimits)) return undefined;
    return { prepare: (plan) => prepare(limits, x, plan, rules, kind.consumes) };
  };
}

function hasLimits(b: CompiledBackend): boolean {
  return b.limits.length > 0;
}

function countsRequests(rule: LimitRule): boolean {
  return rule.metric !== 'tokens';
}

async function prepare(limits: Limits, x: Routed, plan: RequestPlan, rules: readonly LimitRule[], consumes: boolean): Promise<void> {
  const { limiter } = limits;
  const tokens = consumes ? reservedTokens(x.family, plan, x.route.defaultMaxOutputTokens) : 0;
  const client = rules.length > 0 ? await admitted(limits, rules, tokens) : undefined;
  // Backends in plan order: drop those at their limit and reserve on the first that admits. The backends after it
  // stay as fallbacks; the reserved one is charged the request's usage whichever of them serves it.
  let backend: Admission | undefined;
  let shed: Refusal | undefined;
  let from = 0;
  try {
    for (; from < plan.backends.length; from++) {
      const b = plan.backends[from]!;
      const backendRules = consumes ? b.limits : b.limits.filter(countsRequests);
      if (backendRules.length === 0) break;
      const r = await tryAdmit(limits, backendRules, tokens);
      if (r instanceof Admission) {
        backend = r;
        break;
      }
      shed = r;
      limits.refusals.inc({ scope: 'backend', limit: r.rule.field });
    }
  } catch (err) {
    if (client) limiter.cancel(client);
    throw err;
  }
  if (shed && from === plan.backends.length) {
    if (client) limiter.cancel(client);
    throw shedError(x.route.model, shed);
  }
  if (from > 0) plan.backends = plan.backends.slice(from);
  const held = [client, backend].filter((a): a is Admission => a !== undefined);
  if (held.length === 0) return;
  x.onSettled((u: Usage | undefined) => {
    if (!u) return; // a call nothing measured (a follow-up that reads) keeps what it reserved: none
    const used = u.inputTokens + u.outputTokens;
    for (const a of held) limiter.settle(a, used);
  });
  x.onEnd(() => {
    for (const a of held) limiter.release(a);
  });
}

/** Admits against client rules, or throws the 429 (or the 503 of a failed store, fail closed). */
async function admitted(limits: Limits, rules: readonly LimitRule[], tokens: number): Promise<Admission> {
  const r = await tryAdmit(limits, rules, tokens);
  if (r instanceof Admission) return r;
  limits.refusals.inc({ scope: r.rule.scope.slice(0, r.rule.scope.indexOf('/')), limit: r.rule.field });
  throw refusalError(r, limits.limiter.state(rules));
}

async function tryAdmit(limits: Limits, rules: readonly LimitRule[], tokens: number): Promise<Admission | Refusal> {
  try {
    return await limits.limiter.admit(rules, tokens);
  } catch (err) {
    if (err instanceof StoreUnavailable) throw storeDownError();
    throw err;
  }
}
