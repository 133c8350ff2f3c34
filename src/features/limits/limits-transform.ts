// Limits as an exchange transform. `prepare` admits the request against its token's and group's rules (and the
// group's per-model ones), then against the rules of the backends in plan order: a backend at its upstream
// account's limit is dropped from the plan (the request fails over before the upstream would answer 429), and
// when none is left the request is shed with 429. Money limits reserve the request's largest cost over the planned
// backends (money-charge.ts) in the same admission. Token and money reservations settle with the request's final
// usage (`onSettled`); in-flight slots are released when the response is over (`onEnd`), whatever happened.
import type { Routed } from '../../dataplane/exchange/exchange.js';
import type { ExchangeTransform, Feature, RequestPlan, TransformFactory } from '../../dataplane/exchange/transform.js';
import { FAMILIES } from '../../model/families.js';
import type { MoneyLimitRule } from '../../model/money-limits.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import type { LimitRule } from '../../model/usage-limits.js';
import type { Usage } from '../../model/usage.js';
import { pastWarnAt, WARNING_HEADER, warningText } from './budget-warnings.js';
import { MAX_OUTPUT_MEMBERS, reservedUse } from './estimate.js';
import { refusalError, shedError, storeDownError, unpricedError } from './limit-errors.js';
import { Admission, type MoneyCharge, type Refusal } from './admission.js';
import { StoreUnavailable } from './limiter.js';
import type { Limits } from './limits.js';
import { reserveMoney, settledMicros } from './money-charge.js';

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
    const own = x.token.limits;
    const perModel = x.token.group.modelLimits.get(x.route.model);
    const all = perModel ? [...own, ...perModel] : own;
    if (kind.background || kind.video) chargeBackground(limits, x, all);
    const rules = kind.consumes ? all : all.filter(countsRequests);
    const money = kind.consumes ? moneyRulesOf(x) : NO_MONEY;
    if (rules.length === 0 && money.length === 0 && !x.route.backends.some(hasLimits)) return undefined;
    if (money.length === 0) {
      const t: LimitsTransform = { prepare: (plan) => prepare(limits, x, plan, rules, NO_MONEY, kind.consumes, t) };
      return t;
    }
    // The budget warning goes out with the answer's head (where one is still to send: not after keep-alives).
    const t: LimitsTransform = {
      prepare: (plan) => prepare(limits, x, plan, rules, money, kind.consumes, t),
      onResponseStart: (answer) => {
        if (t.warning) answer.headers[WARNING_HEADER] = t.warning;
        return undefined;
      },
    };
    return t;
  };
}

const NO_MONEY: readonly MoneyLimitRule[] = [];

/**
 * A follow-up that records what a background response generated (its usage is marked `background`) charges it to the
 * token's and group's token and money limits, which its create reserved nothing for: after the fact, as a settlement
 * beyond its reservation is. A cost that turned out unknown charges what could be priced. The credit of a failed video
 * (its usage is marked `credit`, its cost negative) is charged the same way: a negative charge.
 */
function chargeBackground(limits: Limits, x: Routed, rules: readonly LimitRule[]): void {
  const tokenRules = rules.filter((r) => r.metric === 'tokens');
  const money = moneyRulesOf(x);
  if (tokenRules.length === 0 && money.length === 0) return;
  x.onSettled((u) => {
    if (!u?.background && !u?.credit) return;
    const charge = money.length > 0 ? { rules: money, micros: settledMicros(x, u, true) ?? 0, group: x.token.group.ref } : undefined;
    limits.limiter.charge(tokenRules, u.inputTokens + u.outputTokens, charge);
  });
}

interface LimitsTransform extends ExchangeTransform {
  /** Set by prepare: the budget warning header's value for this request. */
  warning?: string;
  /** Set by prepare: admits a failover backend on its own limits (the one prepare reserved on is admitted already). */
  admitsFailover?: (backend: CompiledBackend) => Promise<boolean>;
}

/** The token's money limits (its group's included) and the group's for this model. */
function moneyRulesOf(x: Routed): readonly MoneyLimitRule[] {
  const own = x.token.moneyLimits;
  const perModel = x.token.group.modelMoneyLimits.get(x.route.model);
  return perModel ? [...own, ...perModel] : own;
}

function hasLimits(b: CompiledBackend): boolean {
  return b.limits.length > 0;
}

function countsRequests(rule: LimitRule): boolean {
  return rule.metric !== 'tokens';
}

/**
 * Admits the request (or throws its refusal); sets on `t` the budget warning header's value, if any, and how a
 * failover backend is admitted.
 */
async function prepare(
  limits: Limits,
  x: Routed,
  plan: RequestPlan,
  rules: readonly LimitRule[],
  money: readonly MoneyLimitRule[],
  consumes: boolean,
  t: LimitsTransform,
): Promise<void> {
  const { limiter } = limits;
  const use = consumes ? reservedUse(x.family, plan, x.route.defaultMaxOutputTokens) : undefined;
  const tokens = use ? use.inputTokens + use.outputTokens : 0;
  let charge: MoneyCharge | undefined;
  if (money.length > 0 && use) {
    const reserved = reserveMoney(x.family, use, plan.backends, limits.allowUnpriced);
    if (reserved.backends.length === 0) throw unpricedError(x.route.model);
    for (const b of reserved.unpriced) limits.noteUnpriced(x.route.model, b.name);
    plan.backends = reserved.backends;
    charge = { rules: money, micros: reserved.micros, group: x.token.group.ref };
  }
  const client = rules.length > 0 || charge ? await admitted(limits, rules, tokens, charge) : undefined;
  // Backends in plan order: drop those at their limit and reserve on the first that admits. The backends after it
  // stay as fallbacks, each admitted on its own limits when a failover reaches it (admitsFailover).
  let backend: Admission | undefined;
  let shed: (Refusal & { rule: LimitRule }) | undefined;
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
      shed = r as Refusal & { rule: LimitRule }; // backend rules are never money rules
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
  // The backends' admissions by name: the one that answered (tried last) is charged the usage, the others nothing.
  const backends: { name: string; admission: Admission }[] = backend ? [{ name: plan.backends[0]!.name, admission: backend }] : [];
  const first = plan.backends[0];
  // A fallback with limits of its own is admitted on them when a failover reaches it; without one, nothing to ask.
  if (plan.backends.some((b) => b !== first && hasLimits(b)))
    t.admitsFailover = async (b) => {
      const backendRules = b === first ? [] : consumes ? b.limits : b.limits.filter(countsRequests);
      if (backendRules.length === 0) return true;
      const r = await tryAdmit(limits, backendRules, tokens).catch(() => undefined); // fail closed: not this backend
      if (!(r instanceof Admission)) {
        if (r) limits.refusals.inc({ scope: 'backend', limit: r.rule.field });
        return false;
      }
      if (x.closed) {
        limiter.cancel(r); // the client left meanwhile: settled and released already
        return false;
      }
      backends.push({ name: b.name, admission: r });
      return true;
    };
  if (!client && backends.length === 0 && !t.admitsFailover) return;
  x.onSettled((u: Usage | undefined) => {
    if (!u) return; // a call nothing measured (a follow-up that reads) keeps what it reserved: none
    const used = u.inputTokens + u.outputTokens;
    const micros = charge ? settledMicros(x, u, limits.allowUnpriced) : undefined;
    if (client) limiter.settle(client, used, micros);
    for (const b of backends) limiter.settle(b.admission, b.name === x.backend ? used : 0);
  });
  x.onEnd(() => {
    if (client) limiter.release(client);
    for (const b of backends) limiter.release(b.admission);
  });
  if (client && charge) t.warning = budgetWarning(limits, client);
}

/** The header's value: each money limit whose spend is past its warnAt before this request, as this replica knows it. */
function budgetWarning(limits: Limits, admission: Admission): string | undefined {
  let out: string | undefined;
  for (const { rule, spent } of limits.limiter.spentBefore(admission)) {
    if (pastWarnAt(rule, spent)) out = out ? `${out}, ${warningText(rule, spent)}` : warningText(rule, spent);
  }
  return out;
}

/** Admits against client rules, or throws the 429 (or the 503 of a failed store, fail closed). */
async function admitted(limits: Limits, rules: readonly LimitRule[], tokens: number, money?: MoneyCharge): Promise<Admission> {
  const r = await tryAdmit(limits, rules, tokens, money);
  if (r instanceof Admission) return r;
  limits.refusals.inc({ scope: r.rule.scope.slice(0, r.rule.scope.indexOf('/')), limit: r.rule.field });
  throw refusalError(r, limits.limiter.state(rules), limits.currency);
}

async function tryAdmit(limits: Limits, rules: readonly LimitRule[], tokens: number, money?: MoneyCharge): Promise<Admission | Refusal> {
  try {
    return await limits.limiter.admit(rules, tokens, money);
  } catch (err) {
    if (err instanceof StoreUnavailable) throw storeDownError();
    throw err;
  }
}
