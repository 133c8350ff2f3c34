// The answers of the limits feature, in OpenAI's words: 429 `rate_limit_exceeded` (type `requests` or `tokens`)
// with retry-after and the x-ratelimit-* headers, 429 `insufficient_quota` for an exhausted monthly budget or a spent
// money limit, 403 `model_not_priced` for a request whose cost a money limit cannot know, and 503 when the store is
// down and the gateway is set to fail closed. The openai SDKs read these as RateLimitError
// (and retry a 429 after retry-after unless x-should-retry says false).
import { GatewayError } from '../../model/errors.js';
import type { MoneyLimitRule } from '../../model/money-limits.js';
import { currencyDigits, formatMoney } from '../../model/money.js';
import type { LimitRule } from '../../model/usage-limits.js';
import type { AnyRule, Refusal, RuleState } from './admission.js';
import { resetText } from './windows.js';

const WHAT: Record<LimitRule['field'], string> = {
  requestsPerMinute: 'requests per minute',
  tokensPerMinute: 'tokens per minute',
  tokensPerDay: 'tokens per day',
  tokensPerMonth: 'tokens per month',
  concurrentRequests: 'concurrent requests',
};

/** Whose limit, in public words: never a key, only the object's kind and name. */
function whose(rule: AnyRule): string {
  const [kind, ns, name] = rule.scope.split('/');
  if (kind === 'token') return `token ${ns}/${name}`;
  if (kind !== 'group') return 'the upstream';
  const own = `group/${ns}/${name}`;
  return rule.scope === own ? `group ${ns}/${name}` : `group ${ns}/${name} on model ${rule.scope.slice(own.length + '/model/'.length)}`;
}

/** The 429 for a refusal, with headers from where the request's rules stand. */
export function refusalError(refusal: Refusal, states: readonly RuleState[], currency = ''): GatewayError {
  if (!('metric' in refusal.rule)) return moneyRefusal(refusal.rule, refusal, currency);
  const { cost, used, resetMs } = refusal;
  const rule = refusal.rule;
  const headers = rateLimitHeaders(states, rule);
  const retryAfter = Math.max(1, Math.ceil(resetMs / 1000));
  headers['retry-after'] = String(retryAfter);
  if (used === undefined) {
    headers['x-should-retry'] = 'false';
    // A request or in-flight rule costs 1: only a limit of 0 (a key switched off) can never fit it.
    if (rule.metric !== 'tokens') {
      return new GatewayError(429, `The limit of ${rule.limit} ${WHAT[rule.field]} of ${whose(rule)} admits no request.`, {
        type: 'requests',
        code: 'rate_limit_exceeded',
        headers,
      });
    }
    return new GatewayError(
      429,
      `This request needs up to ${cost} tokens (its input bound plus its maximum output), more than the limit of ${rule.limit} ${WHAT[rule.field]} of ${whose(rule)}; lower max_tokens or the input.`,
      { type: 'tokens', code: 'rate_limit_exceeded', headers },
    );
  }
  if (rule.field === 'tokensPerMonth') {
    headers['x-should-retry'] = 'false';
    return new GatewayError(429, `The monthly token budget of ${whose(rule)} (${rule.limit} tokens) is exhausted until the month ends.`, {
      type: 'insufficient_quota',
      code: 'insufficient_quota',
      headers,
    });
  }
  const type = rule.metric === 'tokens' ? 'tokens' : 'requests';
  return new GatewayError(
    429,
    `Rate limit reached for ${whose(rule)}: limit ${rule.limit} ${WHAT[rule.field]}, used ${Math.min(used, rule.limit)}, requested ${cost}. Please try again in ${resetText(resetMs)}.`,
    { type, code: 'rate_limit_exceeded', headers },
  );
}

const MONEY_WHAT: Record<MoneyLimitRule['field'], { what: string; until: string }> = {
  costPerDay: { what: 'daily spend limit', until: 'the UTC day ends' },
  costPerMonth: { what: 'monthly budget', until: 'the month ends' },
};

/**
 * 429 insufficient_quota: the money window cannot take this request's largest cost. Retry-after points at the window's
 * end (the SDKs do not retry it: x-should-retry false).
 */
function moneyRefusal(rule: MoneyLimitRule, refusal: Refusal, currency: string): GatewayError {
  const amount = (micros: number) => (currency ? `${formatMoney(micros, currencyDigits(currency))} ${currency}` : formatMoney(micros));
  const { what, until } = MONEY_WHAT[rule.field];
  const headers = { 'retry-after': String(Math.max(1, Math.ceil(refusal.resetMs / 1000))), 'x-should-retry': 'false' };
  const message =
    refusal.used === undefined
      ? `This request may cost up to ${amount(refusal.cost)}, more than the whole ${what} of ${whose(rule)} (${amount(rule.limit)}); lower max_tokens or the input.`
      : `The ${what} of ${whose(rule)} (${amount(rule.limit)}) is spent until ${until}: this request may cost up to ${amount(refusal.cost)}.`;
  return new GatewayError(429, message, { type: 'insufficient_quota', code: 'insufficient_quota', headers });
}

/**
 * 403: a money limit applies and no backend of the route has the prices this request needs, so its cost would be
 * unknown (serve --allow-unpriced counts it as what can be priced instead).
 */
export function unpricedError(model: string): GatewayError {
  return new GatewayError(
    403,
    `The model \`${model}\` has no price for this request, and a spend limit applies to this key: the gateway refuses a request whose cost it cannot count. Ask the operator to set pricing on its backends.`,
    { type: 'invalid_request_error', code: 'model_not_priced' },
  );
}

/** All backends of the route are at their upstream account's limits: shed before the upstream answers 429. */
export function shedError(model: string, refusal: Refusal & { rule: LimitRule }): GatewayError {
  const retryAfter = Math.max(1, Math.ceil(refusal.resetMs / 1000));
  return new GatewayError(429, `Every backend of the model \`${model}\` is at its upstream rate limit; please try again in ${resetText(refusal.resetMs)}.`, {
    type: refusal.rule.metric === 'tokens' ? 'tokens' : 'requests',
    code: 'rate_limit_exceeded',
    headers: { 'retry-after': String(retryAfter) },
  });
}

export function storeDownError(): GatewayError {
  return new GatewayError(503, 'The rate-limit store is unavailable and the gateway is set to fail closed; retry shortly.', {
    code: 'service_unavailable',
    headers: { 'retry-after': '1' },
  });
}

/**
 * OpenAI's x-ratelimit-{limit,remaining,reset}-{requests,tokens}: for each kind, the rule with the least remaining
 * (the one refusing, when it is of that kind; the limiter noted the count the store refused with). Remaining is this replica's view: exact with the in-process store,
 * within the leases other replicas hold with Redis.
 */
function rateLimitHeaders(states: readonly RuleState[], refusing: LimitRule): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const kind of ['requests', 'tokens'] as const) {
    let pick: RuleState | undefined;
    for (const s of states) {
      const k = s.rule.metric === 'tokens' ? 'tokens' : 'requests';
      if (k !== kind) continue;
      if (s.rule === refusing) {
        pick = s;
        break;
      }
      if (!pick || s.remaining < pick.remaining) pick = s;
    }
    if (!pick) continue;
    headers[`x-ratelimit-limit-${kind}`] = String(pick.rule.limit);
    headers[`x-ratelimit-remaining-${kind}`] = String(pick.remaining);
    headers[`x-ratelimit-reset-${kind}`] = resetText(pick.resetMs);
  }
  return headers;
}
