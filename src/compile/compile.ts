// Pure and total: whatever objects a source read → an immutable RoutingTable plus a status per object.
// An invalid object never throws and never poisons the table: it gets a False condition and is left out.
import type { z } from 'zod';
import { sha256Hex } from '../model/digest.js';
import { FAMILIES, type Family } from '../model/families.js';
import type { Condition, ConditionReason, ObjectStatus } from './conditions.js';
import { cachedKeyDigest, DerivedCache, internModels, Invalid, parsedURL, validateCached } from './compile-cache.js';
import { parseDuration } from './duration.js';
import { compilePatterns } from './glob.js';
import { compileBackendAccess, type Resolved } from './backend-auth.js';
import { compileKeepAliveMs, compileRetry } from './route-policy.js';
import {
  compileGroupLimits,
  compileTokenLimits,
  compileTokenMoneyLimits,
  DEFAULT_MAX_OUTPUT_TOKENS,
  describeLimits,
  groupLimitWarnings,
  NO_RULES,
} from './limits.js';
import { compilePricing, idlePrices, idleWarnAt } from './pricing.js';
import { unservedFamilies } from './api-families.js';
import { limitRules } from '../model/usage-limits.js';
import {
  API_GROUP,
  DEFAULT_NAMESPACE,
  GatewayTokenSchema,
  GroupSchema,
  GROUP_VERSION,
  KINDS,
  ModelRouteSchema,
  objectRef,
  SecretSchema,
  secretValue,
  type GatewayToken,
  type Group,
  type ModelRoute,
  type Secret,
  type SecretKeyRef,
  type SourcedObject,
  type SourceRef,
} from './resources.js';
import {
  DEFAULT_TIMEOUTS,
  type CompiledBackend,
  type CompiledGroup,
  type CompiledRoute,
  type CompiledToken,
  type RoutingTable,
} from '../model/routing-table.js';

export interface CompileOptions {
  /** Epoch ms; used only to mark expired tokens in their status (requests check expiry themselves). */
  now?: number;
  /** Table version number to stamp (the caller counts). */
  version?: number;
  /** Where `demo://` backends point (the built-in demo upstream's loopback URL). */
  demoBaseURL?: string;
  /** For offline checks of a GitOps repo: treat every Secret reference as present. */
  assumeSecretsPresent?: boolean;
}

export interface CompileResult {
  readonly table: RoutingTable;
  readonly statuses: readonly ObjectStatus[];
}

type Validated<T> = { value: T; sourced: SourcedObject; ref: string };

const SCHEMAS = { ModelRoute: ModelRouteSchema, Group: GroupSchema, GatewayToken: GatewayTokenSchema } as const;

export function compile(objects: readonly SourcedObject[], options: CompileOptions = {}): CompileResult {
  const now = options.now ?? Date.now();
  const statuses: ObjectStatus[] = [];
  const secrets = new Map<string, Secret>();
  // A Secret the API server would refuse (data that is not base64) is no Secret, but a reference to it should
  // say why rather than "not found": what is wrong with each, by namespace/name.
  const invalidSecrets = new Map<string, string>();
  const valid = { ModelRoute: [] as Validated<ModelRoute>[], Group: [] as Validated<Group>[], GatewayToken: [] as Validated<GatewayToken>[] };
  const seen = new Set<string>();

  for (const sourced of objects) {
    const o = sourced.object;
    const name = typeof o.metadata?.name === 'string' ? o.metadata.name : '(unnamed)';
    const namespace = typeof o.metadata?.namespace === 'string' ? o.metadata.namespace : DEFAULT_NAMESPACE;
    if (o.kind === 'Secret' && o.apiVersion === 'v1') {
      const secret = validateCached(SecretSchema, o);
      if (!(secret instanceof Invalid)) secrets.set(nsName(secret.metadata.namespace, secret.metadata.name), secret);
      else {
        // Only a file can hold one (the API server refuses what kubectl apply would): it says what is wrong, and the
        // objects referencing it say it is invalid, and why, rather than missing.
        const why = describeIssues(secret.error, sourced.source?.lineOf);
        invalidSecrets.set(nsName(namespace, name), why);
        const base = { ref: objectRef('Secret', namespace, name), kind: 'Secret', namespace, name, generation: undefined, source: sourced.source };
        statuses.push(status(base, { accepted: fail('InvalidSpec', why) }));
      }
      continue;
    }
    if (typeof o.kind !== 'string' || !(KINDS as readonly string[]).includes(o.kind)) {
      // Other APIs' objects (Deployments in the same repo) are none of our business, but a misspelt kind in our
      // group would otherwise vanish without a trace.
      if (typeof o.apiVersion === 'string' && o.apiVersion.startsWith(`${API_GROUP}/`)) {
        const kind = String(o.kind);
        const base = { ref: objectRef(kind, namespace, name), kind, namespace, name, generation: undefined, source: sourced.source };
        statuses.push(status(base, { accepted: fail('InvalidSpec', `unknown kind "${kind}" (expected ${KINDS.join(', ')})`) }));
      }
      continue;
    }
    const kind = o.kind as keyof typeof SCHEMAS;
    const ref = objectRef(kind, namespace, name);
    const generation = typeof o.metadata?.generation === 'number' ? o.metadata.generation : undefined;
    if (o.apiVersion !== GROUP_VERSION) {
      statuses.push(
        status({ ref, kind, namespace, name, generation, source: sourced.source }, { accepted: fail('InvalidSpec', `apiVersion must be ${GROUP_VERSION}`) }),
      );
      continue;
    }
    if (seen.has(ref)) {
      statuses.push(
        status(
          { ref, kind, namespace, name, generation, source: sourced.source },
          { accepted: fail('Conflict', `${kind} ${namespace}/${name} is defined more than once`) },
        ),
      );
      continue;
    }
    seen.add(ref);
    const value = validateCached(SCHEMAS[kind] as z.ZodType, o);
    if (value instanceof Invalid) {
      statuses.push(
        status(
          { ref, kind, namespace, name, generation, source: sourced.source },
          { accepted: fail('InvalidSpec', describeIssues(value.error, sourced.source?.lineOf)) },
        ),
      );
      continue;
    }
    (valid[kind] as Validated<unknown>[]).push({ value, sourced, ref });
  }

  const ctx: RefContext = { secrets, invalidSecrets, assumeSecretsPresent: options.assumeSecretsPresent ?? false };
  const routes = compileRoutes(valid.ModelRoute, ctx, options.demoBaseURL, statuses);
  const groups = compileGroups(valid.Group, routes, statuses);
  const tokensByDigest = compileTokens(valid.GatewayToken, groups, ctx, now, statuses);

  return {
    table: { version: options.version ?? 0, routes, groups, tokensByDigest },
    statuses,
  };
}

// ---- routes -----------------------------------------------------------------------------------------------

/** Most routes serve every family: one shared set rather than one per route. */
const ALL_FAMILIES: ReadonlySet<Family> = new Set<Family>(FAMILIES);

function compileRoutes(items: Validated<ModelRoute>[], ctx: RefContext, demoBaseURL: string | undefined, statuses: ObjectStatus[]): Map<string, CompiledRoute> {
  const routes = new Map<string, CompiledRoute>();
  const owner = new Map<string, string>();
  for (const item of oldestFirst(items)) {
    const r = item.value;
    const namespace = r.metadata.namespace ?? DEFAULT_NAMESPACE;
    const base = statusBase(item, 'ModelRoute');
    const model = r.spec.model ?? r.metadata.name;
    const holder = owner.get(model);
    if (holder !== undefined) {
      statuses.push(status(base, { accepted: fail('Conflict', `model "${model}" is already served by ModelRoute ${holder}`) }));
      continue;
    }
    const names = new Set<string>();
    const duplicate = r.spec.backends.find((b) => {
      if (names.has(b.name)) return true;
      names.add(b.name);
      return false;
    });
    if (duplicate) {
      statuses.push(status(base, { accepted: fail('InvalidSpec', `backend name "${duplicate.name}" is used twice`) }));
      continue;
    }
    const unresolved: string[] = [];
    let refFailure: ConditionReason = 'SecretNotFound';
    const backends: CompiledBackend[] = [];
    for (const b of r.spec.backends) {
      const access = compileBackendAccess(b, (ref) => resolveSecret(ctx, namespace, ref));
      if (!access.ok) {
        unresolved.push(`backend "${b.name}": ${access.message}`);
        refFailure = access.reason;
        continue;
      }
      const baseURL = (b.baseURL === 'demo://' ? (demoBaseURL ?? 'http://demo.invalid/v1') : b.baseURL).replace(/\/+$/, '');
      const url = parsedURL(baseURL);
      backends.push({
        id: `${namespace}/${r.metadata.name}/${b.name}`,
        name: b.name,
        baseURL,
        origin: url.origin,
        basePath: url.pathname.replace(/\/+$/, ''),
        ...access.access,
        pathStyle: b.pathStyle ?? 'openai',
        api: b.api ?? 'openai',
        model: b.model ?? model,
        ...(b.anthropicBetas && { anthropicBetas: new Set(b.anthropicBetas.allow) }),
        priority: b.priority,
        weight: b.weight,
        limits: b.limits ? limitRules(`backend/${namespace}/${r.metadata.name}/${b.name}`, b.limits) : NO_RULES,
        pricing: compilePricing(b.pricing),
      });
    }
    backends.sort((a, b) => a.priority - b.priority || a.name.localeCompare(b.name));
    const refs = unresolved.length === 0 ? REFS_RESOLVED : fail(refFailure, unresolved.join('; '));
    const families = r.spec.endpoints ? new Set<Family>(r.spec.endpoints) : ALL_FAMILIES;
    const warnings = r.spec.backends.flatMap((b) => [...unservedFamilies(b.name, b.api, r.spec.endpoints), ...idlePrices(b.name, b.pricing, families)]);
    statuses.push(status(base, { refs, warnings }));
    if (backends.length === 0) continue;
    owner.set(model, `${namespace}/${r.metadata.name}`);
    const t = r.spec.timeouts;
    const timeouts = {
      connectMs: t?.connect ? parseDuration(t.connect) : DEFAULT_TIMEOUTS.connectMs,
      firstByteMs: t?.firstByte ? parseDuration(t.firstByte) : DEFAULT_TIMEOUTS.firstByteMs,
      streamIdleMs: t?.streamIdle ? parseDuration(t.streamIdle) : DEFAULT_TIMEOUTS.streamIdleMs,
      totalMs: t?.total ? parseDuration(t.total) : DEFAULT_TIMEOUTS.totalMs,
    };
    routes.set(model, {
      model,
      ref: `${namespace}/${r.metadata.name}`,
      namespace,
      name: r.metadata.name,
      families,
      backends,
      timeouts,
      retry: compileRetry(r.spec.retry, timeouts),
      keepAliveMs: compileKeepAliveMs(r.spec.streaming),
      created: createdSeconds(r.metadata.creationTimestamp, item.sourced.seenAt),
      ownedBy: r.spec.ownedBy ?? namespace,
      defaultMaxOutputTokens: r.spec.defaultMaxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
    });
  }
  return routes;
}

// ---- groups -----------------------------------------------------------------------------------------------

/** A Group's compiled form and status, reused while the Group and the served models are unchanged. */
const groupResults = new DerivedCache<{ group: CompiledGroup; status: ObjectStatus }>();

function compileGroups(items: Validated<Group>[], routes: Map<string, CompiledRoute>, statuses: ObjectStatus[]): Map<string, CompiledGroup> {
  const groups = new Map<string, CompiledGroup>();
  const allModels = internModels([...routes.keys()].sort());
  for (const item of items) {
    const g = item.value;
    const { group, status: st } = groupResults.get(g, [allModels, ...sourceDeps(item)], () => {
      const namespace = g.metadata.namespace ?? DEFAULT_NAMESPACE;
      const warnings = [
        ...unmatchedPatterns(g.spec.models, allModels).map((p) => `model pattern "${p}" matches no served model`),
        ...groupLimitWarnings(g.spec.limits),
      ];
      const matcher = compilePatterns(g.spec.models);
      const models = allModels.filter(matcher);
      const ref = `${namespace}/${g.metadata.name}`;
      const group: CompiledGroup = {
        ref,
        name: g.metadata.name,
        namespace,
        models,
        modelSet: new Set(models),
        ...compileGroupLimits(ref, g.spec.limits, models),
      };
      return {
        group,
        status: status(statusBase(item, 'Group'), {
          refs: ok('ResolvedRefs', `${models.length} model(s) allowed${describeLimits(group.limits, group.modelLimits.size)}`),
          warnings,
        }),
      };
    });
    groups.set(group.ref, group);
    statuses.push(st);
  }
  return groups;
}

// ---- tokens -----------------------------------------------------------------------------------------------

const tokenRefs = new WeakMap<CompiledGroup, Condition>();

/** The ResolvedRefs condition of every token that uses its group's models as they are: one object per group. */
function groupRefs(group: CompiledGroup): Condition {
  let c = tokenRefs.get(group);
  if (!c) tokenRefs.set(group, (c = Object.freeze(ok('ResolvedRefs', `group "${group.name}", ${group.models.length} model(s)`))));
  return c;
}

/** A token's compiled form and status, reused while the token, its group's compiled form and its digest are unchanged. */
const tokenResults = new DerivedCache<{ token: CompiledToken; status: ObjectStatus }>();

function compileTokens(
  items: Validated<GatewayToken>[],
  groups: Map<string, CompiledGroup>,
  ctx: RefContext,
  now: number,
  statuses: ObjectStatus[],
): Map<string, CompiledToken> {
  const tokens = new Map<string, CompiledToken>();
  const owner = new Map<string, GatewayToken>();
  for (const item of oldestFirst(items)) {
    const t = item.value;
    const namespace = t.metadata.namespace ?? DEFAULT_NAMESPACE;
    const group = groups.get(`${namespace}/${t.spec.group}`);
    let digest: string | undefined;
    let refs: Condition | undefined;
    if (t.spec.sha256) digest = t.spec.sha256;
    else if (t.spec.secretRef) {
      const ref = t.spec.secretRef;
      const res = resolveKeyDigest(ctx, nsName(namespace, ref.name), namespace, ref);
      if (!res.ok) refs = fail(res.reason, res.message);
      else if (res.value !== undefined) digest = res.value;
    }
    if (!refs && !group) refs = fail('GroupNotFound', `Group "${t.spec.group}" not found in namespace ${namespace}`);
    if (refs || !group) {
      statuses.push(status(statusBase(item, 'GatewayToken'), { refs }));
      continue;
    }
    if (digest !== undefined) {
      const holder = owner.get(digest);
      if (holder !== undefined) {
        const by = `${holder.metadata.namespace ?? DEFAULT_NAMESPACE}/${holder.metadata.name}`;
        statuses.push(status(statusBase(item, 'GatewayToken'), { accepted: fail('Conflict', `the same key is already used by GatewayToken ${by}`) }));
        continue;
      }
      owner.set(digest, t);
    }
    const expiresAtMs = t.spec.expiresAt ? Date.parse(t.spec.expiresAt) : undefined;
    const expired = expiresAtMs !== undefined && expiresAtMs <= now;
    // Everything below depends only on the token, its group's compiled form, its digest and whether it has
    // expired: for an unchanged token in an unchanged group it is the previous compile's result.
    const deps = [group, digest, expired, item.sourced.source?.file, item.sourced.source?.line];
    const done = tokenResults.lookup(t, deps) ?? tokenResults.store(t, deps, compileToken(item, namespace, group, expiresAtMs, expired));
    if (digest !== undefined) tokens.set(digest, done.token);
    statuses.push(done.status);
  }
  return tokens;
}

function compileToken(
  item: Validated<GatewayToken>,
  namespace: string,
  group: CompiledGroup,
  expiresAtMs: number | undefined,
  expired: boolean,
): { token: CompiledToken; status: ObjectStatus } {
  const t = item.value;
  let warnings: string[] = [];
  let models = group.models;
  if (t.spec.models) {
    const narrow = compilePatterns(t.spec.models);
    models = group.models.filter(narrow);
    warnings = unmatchedPatterns(t.spec.models, group.models).map((p) => `model pattern "${p}" matches no model of group "${group.name}"`);
  }
  const token: CompiledToken = {
    ref: `${namespace}/${t.metadata.name}`,
    name: t.metadata.name,
    namespace,
    group,
    models,
    // Tokens that do not narrow share their group's set (thousands of tokens, a handful of groups).
    modelSet: t.spec.models ? new Set(models) : group.modelSet,
    expiresAtMs,
    disabled: t.spec.disabled,
    limits: compileTokenLimits(`${namespace}/${t.metadata.name}`, t.spec.limits, group),
    moneyLimits: compileTokenMoneyLimits(`${namespace}/${t.metadata.name}`, t.spec.limits, group),
  };
  warnings.push(...idleWarnAt('limits.', t.spec.limits));
  const ready = t.spec.disabled ? fail('Disabled', 'the token is disabled') : expired ? fail('Expired', `the token expired at ${t.spec.expiresAt}`) : undefined;
  const own = t.spec.limits ? describeLimits(token.limits.slice(0, token.limits.length - group.limits.length)) : '';
  const refs = t.spec.models || own ? ok('ResolvedRefs', `group "${group.name}", ${models.length} model(s)${own}`) : groupRefs(group);
  return { token, status: status(statusBase(item, 'GatewayToken'), { refs, ready, warnings }) };
}

// ---- helpers ----------------------------------------------------------------------------------------------

interface RefContext {
  secrets: Map<string, Secret>;
  /** Secrets present but invalid (namespace/name → what is wrong), which have a status of their own. */
  invalidSecrets: Map<string, string>;
  assumeSecretsPresent: boolean;
}

function resolveSecret(ctx: RefContext, namespace: string, ref: SecretKeyRef): Resolved {
  const secret = ctx.secrets.get(nsName(namespace, ref.name));
  if (!secret) {
    // In the input but unusable: assuming it present would hide the mistake (--assume-secrets is for Secrets kept elsewhere).
    const invalid = ctx.invalidSecrets.get(nsName(namespace, ref.name));
    if (invalid !== undefined) return { ok: false, reason: 'SecretNotFound', message: `Secret "${ref.name}" in namespace ${namespace} is invalid: ${invalid}` };
    if (ctx.assumeSecretsPresent) return { ok: true, value: undefined };
    return { ok: false, reason: 'SecretNotFound', message: `Secret "${ref.name}" not found in namespace ${namespace}` };
  }
  const value = secretValue(secret, ref.key);
  if (value === undefined) return { ok: false, reason: 'SecretKeyNotFound', message: `Secret "${ref.name}" has no key "${ref.key}"` };
  return { ok: true, value };
}

/** Like resolveSecret, but yields the digest of the (trimmed) key, from the cache when the Secret is unchanged. */
function resolveKeyDigest(ctx: RefContext, secretName: string, namespace: string, ref: SecretKeyRef): Resolved {
  const secret = ctx.secrets.get(secretName);
  if (!secret) return resolveSecret(ctx, namespace, ref);
  const digest = cachedKeyDigest(secret, ref.key, () => {
    const value = secretValue(secret, ref.key)?.trim();
    return value === undefined ? undefined : value === '' ? EMPTY_KEY : sha256Hex(value);
  });
  if (digest === undefined) return resolveSecret(ctx, namespace, ref);
  // `--from-literal=token=$KEY` with KEY unset: no client can send an empty key, so the token must not look Ready.
  if (digest === EMPTY_KEY) return { ok: false, reason: 'SecretKeyNotFound', message: `Secret "${ref.name}" has an empty key "${ref.key}"` };
  return { ok: true, value: digest };
}

/** Stands for an empty key among digests (a SHA-256 digest is never empty). */
const EMPTY_KEY = '';

/** The patterns (of a Group or a narrowing token) that match none of `models`: each is worth a warning. */
function unmatchedPatterns(patterns: readonly string[], models: readonly string[]): string[] {
  return patterns.filter((p) => !models.some(compilePatterns([p])));
}

/** Where an object came from, as values: a status names the file and line, which can move without the object changing. */
function sourceDeps(item: Validated<unknown>): [string | undefined, number | undefined] {
  return [item.sourced.source?.file, item.sourced.source?.line];
}

function nsName(namespace: string | undefined, name: string): string {
  return `${namespace ?? DEFAULT_NAMESPACE}/${name}`;
}

/** Older objects first (creationTimestamp), then namespace/name: a newcomer never takes over a live name. */
function oldestFirst<T extends ModelRoute | GatewayToken>(items: Validated<T>[]): Validated<T>[] {
  // Parse each timestamp once, not once per comparison: with 10,000 tokens that is most of the sort's cost.
  const created = (i: Validated<T>) => (i.value.metadata.creationTimestamp ? Date.parse(i.value.metadata.creationTimestamp) || 0 : 0);
  return items
    .map((item) => ({ item, t: created(item) }))
    .sort((a, b) => a.t - b.t || (a.item.ref < b.item.ref ? -1 : a.item.ref > b.item.ref ? 1 : 0))
    .map((x) => x.item);
}

/** The route's creation time (Unix seconds): its creationTimestamp, else when the source first saw it, else 0. */
function createdSeconds(ts: string | undefined, seenAt: number | undefined): number {
  const ms = ts ? Date.parse(ts) : NaN;
  if (Number.isFinite(ms)) return Math.floor(ms / 1000);
  return seenAt === undefined ? 0 : Math.floor(seenAt / 1000);
}

function statusBase(item: Validated<ModelRoute | Group | GatewayToken>, kind: string) {
  const m = item.value.metadata;
  return { ref: item.ref, kind, namespace: m.namespace ?? DEFAULT_NAMESPACE, name: m.name, generation: m.generation, source: item.sourced.source };
}

function ok(reason: ConditionReason, message: string): Condition {
  return { type: 'ResolvedRefs', status: 'True', reason, message };
}

function fail(reason: ConditionReason, message: string): Condition {
  return { type: 'ResolvedRefs', status: 'False', reason, message };
}

interface StatusParts {
  accepted?: Condition;
  refs?: Condition | undefined;
  ready?: Condition | undefined;
  warnings?: string[];
}

// The conditions most objects share, as one frozen object each rather than one per object and compile.
const ACCEPTED: Condition = Object.freeze({ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'spec is valid' });
const REFS_RESOLVED: Condition = Object.freeze({ type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: 'all references resolved' });
const READY: Condition = Object.freeze({ type: 'Ready', status: 'True', reason: 'Ready', message: 'serving' });
const NO_WARNINGS: string[] = Object.freeze([]) as unknown as string[];

// The conditions of a Ready object, one frozen array per shared ResolvedRefs condition (all references resolved, or
// a Group's "n model(s)" that its tokens share): ten thousand tokens then hold a handful of arrays, not one each.
const readyArrays = new WeakMap<Condition, readonly Condition[]>();

function readyConditions(accepted: Condition, refs: Condition): readonly Condition[] {
  if (accepted !== ACCEPTED || !Object.isFrozen(refs)) return [accepted, refs, READY];
  let conditions = readyArrays.get(refs);
  if (!conditions) readyArrays.set(refs, (conditions = Object.freeze([ACCEPTED, refs, READY])));
  return conditions;
}

/** Assembles Accepted, ResolvedRefs and the Ready summary from the parts that were decided. */
function status(
  base: { ref: string; kind: string; namespace: string; name: string; generation: number | undefined; source: SourcedObject['source'] },
  parts: StatusParts,
): ObjectStatus {
  const accepted: Condition = parts.accepted ? { ...parts.accepted, type: 'Accepted' } : ACCEPTED;
  let conditions: readonly Condition[];
  if (accepted.status === 'False') {
    conditions = [accepted, { type: 'Ready', status: 'False', reason: 'NotAccepted', message: accepted.message }];
  } else {
    const refs: Condition = parts.refs ? (parts.refs.type === 'ResolvedRefs' ? parts.refs : { ...parts.refs, type: 'ResolvedRefs' }) : REFS_RESOLVED;
    if (refs.status === 'False') conditions = [accepted, refs, { type: 'Ready', status: 'False', reason: 'RefsNotResolved', message: refs.message }];
    else if (parts.ready) conditions = [accepted, refs, { ...parts.ready, type: 'Ready' }];
    else conditions = readyConditions(accepted, refs);
  }
  const { source, ...rest } = base;
  // Only file and line: a status is plain data (logged, compared, written back), never the parser's lineOf.
  const where = source
    ? { ...(source.file !== undefined ? { file: source.file } : {}), ...(source.line !== undefined ? { line: source.line } : {}) }
    : undefined;
  return { ...rest, ...(where ? { source: where } : {}), conditions, warnings: parts.warnings && parts.warnings.length > 0 ? parts.warnings : NO_WARNINGS };
}

function describeIssues(error: z.ZodError, lineOf: SourceRef['lineOf']): string {
  return error.issues
    .slice(0, 5)
    .map((i) => {
      const line = lineOf?.(i.path);
      return `${i.path.length ? i.path.join('.') : '(root)'}${line === undefined ? '' : ` (line ${line})`}: ${i.message}`;
    })
    .join('; ');
}
