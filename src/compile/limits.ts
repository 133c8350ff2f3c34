// Compiles the limits of Groups and GatewayTokens into the rules the limits feature checks (model/usage-limits.ts).
// Pure. Per-model limits are resolved here for every model the group serves, so a request does one map read.
import type { MoneyLimitRule } from '../model/money-limits.js';
import { type LimitRule, limitRules } from '../model/usage-limits.js';
import { compilePatterns } from './glob.js';
import { idleWarnAt, moneyRules } from './pricing.js';
import type { GatewayToken, Group } from './resources.js';

/** Reserved for output when a request names no maximum and its route sets no defaultMaxOutputTokens. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/** The rules of everything without limits: one shared empty array. */
export const NO_RULES: readonly LimitRule[] = Object.freeze([]);
const NO_MODEL_RULES: ReadonlyMap<string, readonly LimitRule[]> = new Map();
const NO_MONEY: readonly MoneyLimitRule[] = Object.freeze([]);
const NO_MODEL_MONEY: ReadonlyMap<string, readonly MoneyLimitRule[]> = new Map();

type GroupLimits = NonNullable<Group['spec']['limits']>;

interface CompiledGroupLimits {
  limits: readonly LimitRule[];
  modelLimits: ReadonlyMap<string, readonly LimitRule[]>;
  moneyLimits: readonly MoneyLimitRule[];
  modelMoneyLimits: ReadonlyMap<string, readonly MoneyLimitRule[]>;
}

export function compileGroupLimits(groupRef: string, spec: GroupLimits | undefined, models: readonly string[]): CompiledGroupLimits {
  if (!spec) return { limits: NO_RULES, modelLimits: NO_MODEL_RULES, moneyLimits: NO_MONEY, modelMoneyLimits: NO_MODEL_MONEY };
  const { models: perModel, ...own } = spec;
  const limits = orShared(limitRules(`group/${groupRef}`, own), NO_RULES);
  const moneyLimits = orShared(moneyRules(`group/${groupRef}`, own), NO_MONEY);
  if (!perModel || perModel.length === 0) return { limits, modelLimits: NO_MODEL_RULES, moneyLimits, modelMoneyLimits: NO_MODEL_MONEY };
  const entries = perModel.map((entry) => ({ matches: compilePatterns([entry.model]), entry }));
  const modelLimits = new Map<string, readonly LimitRule[]>();
  const modelMoneyLimits = new Map<string, readonly MoneyLimitRule[]>();
  for (const model of models) {
    const hit = entries.find((e) => e.matches(model));
    if (hit) {
      const { model: _pattern, ...fields } = hit.entry;
      const rules = limitRules(`group/${groupRef}/model/${model}`, fields);
      const money = moneyRules(`group/${groupRef}/model/${model}`, fields);
      // A per-model entry of money limits only has no request or token rules: the map keeps the models that have some.
      if (rules.length > 0) modelLimits.set(model, rules);
      if (money.length > 0) modelMoneyLimits.set(model, money);
    }
  }
  return { limits, modelLimits, moneyLimits, modelMoneyLimits: modelMoneyLimits.size > 0 ? modelMoneyLimits : NO_MODEL_MONEY };
}

/** The token's own rules, then its group's (both apply); the group's array itself when the token sets none. */
export function compileTokenLimits(tokenRef: string, spec: GatewayToken['spec']['limits'], group: { limits: readonly LimitRule[] }): readonly LimitRule[] {
  const own = limitRules(`token/${tokenRef}`, spec);
  return own.length === 0 ? group.limits : [...own, ...group.limits];
}

/** The same for money limits. */
export function compileTokenMoneyLimits(
  tokenRef: string,
  spec: GatewayToken['spec']['limits'],
  group: { moneyLimits: readonly MoneyLimitRule[] },
): readonly MoneyLimitRule[] {
  const own = moneyRules(`token/${tokenRef}`, spec);
  return own.length === 0 ? group.moneyLimits : [...own, ...group.moneyLimits];
}

/** Warnings of a Group's limits: a warnAt with no money limit to apply to, in the group's block or a per-model entry. */
export function groupLimitWarnings(spec: GroupLimits | undefined): string[] {
  return [...idleWarnAt('limits.', spec), ...(spec?.models ?? []).flatMap((m, i) => idleWarnAt(`limits.models[${i}].`, m))];
}

function orShared<T>(rules: T[], shared: readonly T[]): readonly T[] {
  return rules.length > 0 ? rules : shared;
}

/** Where an object's limits start in its ResolvedRefs message (`check` shows them beside "serving"). */
export const LIMITS_MARK = '; limits: ';

/** The limits in a ResolvedRefs message: "; limits: requestsPerMinute 600, tokensPerDay 1000000", or "" for none. */
export function describeLimits(rules: readonly LimitRule[], perModel = 0): string {
  const parts = rules.map((r) => `${r.field} ${r.limit}`);
  if (perModel > 0) parts.push(`per-model limits on ${perModel} model(s)`);
  return parts.length === 0 ? '' : `${LIMITS_MARK}${parts.join(', ')}`;
}
