// The gateway's configuration for the benchmark: 1,000 ModelRoutes pointing at the fake upstream and 10,000
// GatewayTokens in 10 Groups (most by SHA-256 digest, some through Secrets, as a real install mixes them),
// written as YAML manifests into a temp directory for the file source.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';

export const ROUTES = 1_000;
export const TOKENS = 10_000;
const GROUPS = 10;
/** Tokens 0..SECRET_TOKENS-1 keep their key in a Secret; the rest are configured by digest. */
const SECRET_TOKENS = 1_000;
const GV = 'modelgateway.io/v1alpha1';

const modelName = (i: number): string => `bench-model-${String(i).padStart(4, '0')}`;
const tokenKey = (i: number): string => `sk-bench-${String(i).padStart(5, '0')}-${createHash('sha256').update(String(i)).digest('hex').slice(0, 24)}`;

/** The model and key the load uses: in the middle of the table, through a digest token in a glob group. */
export const BENCH_MODEL = modelName(500);
const BENCH_TOKEN_INDEX = 4_242;
export const BENCH_KEY = tokenKey(BENCH_TOKEN_INDEX);
/** A route of the messages family to a native (api: anthropic) backend, in group 0's glob. */
export const BENCH_MESSAGES_MODEL = 'bench-messages';
/** A route of the messages family to a chat completions backend: the gateway translates both ways. */
export const BENCH_MESSAGES_TRANSLATED_MODEL = 'bench-messages-translated';
/** A route of the responses family to an OpenAI backend: the Responses request passed through. */
export const BENCH_RESPONSES_MODEL = 'bench-responses';
/** A route of the responses family to an `api: chatCompletions` backend: the gateway translates both ways. */
export const BENCH_RESPONSES_TRANSLATED_MODEL = 'bench-responses-translated';
/** A route whose upstream holds streams open (the fake upstream's `model: "hold"`), for the RSS scenario. */
export const HOLD_MODEL = 'bench-hold';
/** A route whose upstream never reports usage in streams (the fake upstream's `model: "nousage"`): the gateway estimates. */
export const NO_USAGE_MODEL = 'bench-nousage';

/**
 * Limits high enough never to refuse the bench's load, set on every group and token, so a request passes every
 * rule the gateway has (requests, tokens per minute/day/month, in flight, money per day and month with a warning
 * threshold): what limits cost, not what they refuse.
 */
const NEVER_REFUSING = {
  requestsPerMinute: 1_000_000_000,
  tokensPerMinute: 1_000_000_000_000,
  tokensPerDay: 1_000_000_000_000,
  tokensPerMonth: 1_000_000_000_000,
  concurrentRequests: 1_000_000,
  costPerDay: '999999999',
  costPerMonth: '999999999',
  warnAt: 99,
};
/** Prices on every backend (with or without limits: the same routes), so money limits reserve and settle costs. */
const PRICING = { inputPerMTok: '0.15', cachedInputPerMTok: '0.075', outputPerMTok: '0.60' };

export function writeManifests(dir: string, upstreamBaseURL: string, options: { limits?: boolean } = {}): { files: string[] } {
  const limits = options.limits ? { limits: NEVER_REFUSING } : {};
  mkdirSync(dir, { recursive: true });
  const docs = (objects: object[]): string => objects.map((o) => stringify(o)).join('---\n');
  const upstreamSecret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'bench-upstream', labels: { 'modelgateway.io/secret': 'true' } },
    stringData: { apiKey: 'sk-upstream-bench' },
  };
  const backend = (name: string, model?: string) => ({
    name,
    baseURL: upstreamBaseURL,
    apiKeySecretRef: { name: 'bench-upstream', key: 'apiKey' },
    ...(model ? { model } : {}),
    pricing: PRICING,
  });
  const routes: object[] = Array.from({ length: ROUTES }, (_, i) => ({
    apiVersion: GV,
    kind: 'ModelRoute',
    metadata: { name: modelName(i) },
    // Every tenth route has a fallback tier, as real routes do; the planner still picks tier 0 first.
    spec: { backends: i % 10 === 0 ? [backend('primary'), { ...backend('fallback'), priority: 1 }] : [backend('primary')] },
  }));
  routes.push({ apiVersion: GV, kind: 'ModelRoute', metadata: { name: HOLD_MODEL }, spec: { backends: [backend('hold', 'hold')] } });
  routes.push({ apiVersion: GV, kind: 'ModelRoute', metadata: { name: NO_USAGE_MODEL }, spec: { backends: [backend('nousage', 'nousage')] } });
  const anthropic = {
    name: 'anthropic',
    api: 'anthropic',
    baseURL: upstreamBaseURL,
    auth: { header: { name: 'x-api-key', secretRef: { name: 'bench-upstream', key: 'apiKey' } } },
    pricing: PRICING, // priced like every other backend: money limits refuse an unpriced model
  };
  routes.push({ apiVersion: GV, kind: 'ModelRoute', metadata: { name: BENCH_MESSAGES_MODEL }, spec: { endpoints: ['messages'], backends: [anthropic] } });
  routes.push({
    apiVersion: GV,
    kind: 'ModelRoute',
    metadata: { name: BENCH_MESSAGES_TRANSLATED_MODEL },
    spec: { endpoints: ['messages'], backends: [backend('chat')] },
  });
  routes.push({
    apiVersion: GV,
    kind: 'ModelRoute',
    metadata: { name: BENCH_RESPONSES_MODEL },
    spec: { endpoints: ['responses'], backends: [backend('responses')] },
  });
  routes.push({
    apiVersion: GV,
    kind: 'ModelRoute',
    metadata: { name: BENCH_RESPONSES_TRANSLATED_MODEL },
    spec: { endpoints: ['responses'], backends: [{ ...backend('chat'), api: 'chatCompletions' }] },
  });
  // Group 0 uses globs; the others list 100 models each by name.
  const groups = Array.from({ length: GROUPS }, (_, g) => ({
    apiVersion: GV,
    kind: 'Group',
    metadata: { name: `group-${g}` },
    spec: { models: g === 0 ? ['bench-*'] : Array.from({ length: 100 }, (_, j) => modelName(g * 100 + j)), ...limits },
  }));
  const secrets: object[] = [upstreamSecret];
  const tokens = Array.from({ length: TOKENS }, (_, i) => {
    const name = `token-${String(i).padStart(5, '0')}`;
    const group = i === BENCH_TOKEN_INDEX ? 'group-0' : `group-${i % GROUPS}`;
    if (i < SECRET_TOKENS) {
      secrets.push({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-key` }, stringData: { token: tokenKey(i) } });
      return { apiVersion: GV, kind: 'GatewayToken', metadata: { name }, spec: { group, secretRef: { name: `${name}-key`, key: 'token' }, ...limits } };
    }
    const sha256 = createHash('sha256').update(tokenKey(i)).digest('hex');
    return { apiVersion: GV, kind: 'GatewayToken', metadata: { name }, spec: { group, sha256, ...limits } };
  });
  const files = {
    'routes.yaml': docs(routes),
    'groups.yaml': docs(groups),
    'tokens.yaml': docs(tokens),
    'secrets.yaml': docs(secrets),
  };
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
  return { files: Object.keys(files) };
}
