// Compiles the limits of Groups and GatewayTokens into the rules the limits feature checks (model/usage-limits.ts).
// Pure. Per-model limits are resolved here for every model the group serves, so a request does one map read.
import { type LimitRule, limitRules } from '../model/usage-limits.js';
import { compilePatterns } from './glob.js';
import type { GatewayToken, Group } from './resources.js';

/** Reserved for output when a request names no maximum and its route sets no defaultMaxOutputTokens. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/** The rules of everything without limits: one shared empty array. */
export const NO_RULES: readonly LimitRule[] = Object.freeze([]);
const NO_MODEL_RULES: ReadonlyMap<string, readonly LimitRule[]> = new Map();

type GroupLimits = NonNullable<Group['spec']['limits']>;

export function compileGroupLimits(
  groupKey: string,
  spec: GroupLimits | undefined,
  models: readonly string[],
): { limits: readonly LimitRule[]; modelLimits: ReadonlyMap<string, readonly LimitRule[]> } {
  if (!spec) return { limits: NO_RULES, modelLimits: NO_MODEL_RULES };
  const { models: perModel, ...own } = spec;
  const limits = limitRules(`group/${groupKey}`, own);
  if (!perModel || perModel.length === 0) return { limits: limits.length > 0 ? limits : NO_RULES, modelLimits: NO_MODEL_RULES };
  const entries = perModel.map((entry) => ({ matches: compilePatterns([entry.model]), entry }));
  const modelLimits = new Map<string, readonly LimitRule[]>();
  for (const model of models) {
    const hit = entries.find((e) => e.matches(model));
    if (hit) {
      const { model: _pattern, ...fields } = hit.entry;
      modelLimits.set(model, limitRules(`group/${groupKey}/model/${model}`, fields));
    }
  }
  return { limits: limits.length > 0 ? limits : NO_RULES, modelLimits };
}

/** The token's own rules, then its group's (both apply); the group's array itself when the token sets none. */
export function compileTokenLimits(tokenKey: string, spec: GatewayToken['spec']['limits'], group: { limits: readonly LimitRule[] }): readonly LimitRule[] {
  const own = limitRules(`token/${tokenKey}`, spec);
  return own.length === 0 ? group.limits : [...own, ...group.limits];
}

/** Where an object's limits start in its ResolvedRefs message (`check` shows them beside "serving"). */
export const LIMITS_MARK = '; limits: ';

/** The limits in a ResolvedRefs message: "; limits: requestsPerMinute 600, tokensPerDay 1000000", or "" for none. */
export function describeLimits(rules: readonly LimitRule[], perModel = 0): string {
  const parts = rules.map((r) => `${r.field} ${r.limit}`);
  if (perModel > 0) parts.push(`per-model limits on ${perModel} model(s)`);
  return parts.length === 0 ? '' : `${LIMITS_MARK}${parts.join(', ')}`;
}
